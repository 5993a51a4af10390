import { useMemo, useState } from "react";
import type { ApiKey } from "../api/client";
import { CopyButton } from "../components/CopyButton";
import { Modal } from "../components/Modal";
import { embedSnippet } from "../lib/embed";
import { makeSnippets, makeV2Snippets } from "../lib/snippets";
import { CreateKeyDialog } from "../pages/Settings";

const TABS = [
  { id: "curl", label: "cURL" },
  { id: "python", label: "Python" },
  { id: "javascript", label: "JavaScript" },
  { id: "webhook", label: "Webhook" },
  { id: "v2-curl", label: "v2 cURL" },
  { id: "v2-python", label: "v2 Python" },
  { id: "v2-javascript", label: "v2 JavaScript" },
  { id: "embed", label: "Embed into site" },
] as const;

export function ApiPanel(props: {
  flowId: string;
  /** the chat widget's window title */
  flowName?: string;
  endpointName?: string | null;
  tweaks: Record<string, Record<string, unknown>>;
  hasWebhook: boolean;
  /** the published version's tag (API callers run it), or null: they run the draft as last saved */
  published?: string | null;
  onClose: () => void;
}) {
  const [tab, setTab] = useState<(typeof TABS)[number]["id"]>("curl");
  const [key, setKey] = useState<ApiKey | null>(null);
  const [creating, setCreating] = useState(false);
  const [withTweaks, setWithTweaks] = useState(false);
  const sessionId = useMemo(() => (crypto.randomUUID ? crypto.randomUUID() : `session-${Date.now()}`), []);
  const s = useMemo(
    () =>
      makeSnippets({
        baseUrl: window.location.origin,
        flowId: props.flowId,
        endpointName: props.endpointName,
        apiKey: key?.api_key,
        sessionId,
        tweaks: withTweaks ? props.tweaks : undefined,
      }),
    [props.flowId, props.endpointName, key, sessionId, withTweaks, props.tweaks],
  );
  const v2 = useMemo(
    () => makeV2Snippets({ baseUrl: window.location.origin, flowId: props.flowId, apiKey: key?.api_key, sessionId, tweaks: withTweaks ? props.tweaks : undefined }),
    [props.flowId, key, sessionId, withTweaks, props.tweaks],
  );
  const codes: Record<(typeof TABS)[number]["id"], string> = {
    curl: s.curl,
    python: s.python,
    javascript: s.javascript,
    webhook: s.webhookCurl,
    "v2-curl": v2.curl,
    "v2-python": v2.python,
    "v2-javascript": v2.javascript,
    embed: embedSnippet({ hostUrl: window.location.origin, flowId: props.flowId, windowTitle: props.flowName ?? "Chat", apiKey: key?.api_key }),
  };
  const code = codes[tab];
  const endpoint = tab === "webhook" ? s.webhookUrl : tab.startsWith("v2-") ? v2.url : s.runUrl;
  return (
    <Modal title="API access" onClose={props.onClose} wide testId="api-panel">
      <p className="muted">
        Run this flow from any program with <code>POST {endpoint}</code> and an API key in the <code>x-api-key</code> header.
        {tab.startsWith("v2-") && " The v2 workflows API runs it synchronously, as a stream (AG-UI or the reference framing) or in the background."}
        {tab === "webhook" && !props.hasWebhook && " Add a Webhook component to the flow to receive the request body."}
      </p>
      {tab === "embed" && (
        <p className="muted" data-testid="embed-note">
          Paste this into the <code>&lt;body&gt;</code> of a web page: a chat window that talks to this flow. The widget is the reference&apos;s separately
          published chat web component: the visitor&apos;s browser loads it from jsDelivr, this server does not host it. Serve the page over HTTPS
          and allow its origin in this server&apos;s CORS settings; an API key in the snippet is visible to every visitor of the page.
        </p>
      )}
      <p data-testid="api-version">
        {props.published
          ? `These calls run the published version ${props.published}, not the draft you are editing (History publishes another).`
          : "These calls run the flow as last saved (nothing is published)."}
      </p>
      <div className="api-key-row">
        {key ? (
          <span>
            Using the new key <strong>{key.name}</strong> (shown only now).
          </span>
        ) : (
          <span className="muted">The snippets read the key from <code>SERVICE_API_KEY</code>.</span>
        )}
        <button className="btn btn-small" onClick={() => setCreating(true)}>
          Create API key
        </button>
        <label className="inline-check">
          <input type="checkbox" checked={withTweaks} onChange={(e) => setWithTweaks(e.target.checked)} /> Include tweaks
        </label>
      </div>
      <div className="tabs" role="tablist">
        {TABS.map((t) => (
          <button key={t.id} role="tab" aria-selected={tab === t.id} className={tab === t.id ? "active" : ""} onClick={() => setTab(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div className="code-block">
        <pre data-testid="api-snippet" tabIndex={0}>
          {code}
        </pre>
        <CopyButton text={code} />
      </div>
      <dl className="api-facts">
        <dt>Flow id</dt>
        <dd>
          <code data-testid="api-flow-id">{props.flowId}</code>
        </dd>
        {props.endpointName && (
          <>
            <dt>Endpoint name</dt>
            <dd>
              <code>{props.endpointName}</code>
            </dd>
          </>
        )}
        <dt>Run URL</dt>
        <dd>
          <code data-testid="api-run-url">{s.runUrl}</code>
        </dd>
      </dl>
      {creating && <CreateKeyDialog onClose={() => setCreating(false)} onCreated={(k) => setKey(k)} />}
    </Modal>
  );
}
