// Flow settings: the flow's type (workflow / agent), publishing over A2A, and the agent card's overrides with a live
// preview of the card the server would publish (POST /api/v1/a2a/{id}/card-preview builds it exactly as the card
// endpoint does, so its 422 errors are the ones the card would give) and the card URL to copy.
import { useEffect, useMemo, useState } from "react";
import { api, request } from "../api/client";
import { CopyButton } from "../components/CopyButton";
import { Modal } from "../components/Modal";
import { notify } from "../components/toast";
import { parseOverrides } from "../lib/a2a";
import { ApiError } from "../lib/errors";
import type { FlowRecord, Project } from "../lib/types";

interface Preview {
  card: Record<string, unknown>;
  cardUrl: string;
  published: boolean;
}

interface FieldError {
  loc: (string | number)[];
  msg: string;
}

const PLACEHOLDER = `{
  "name": "Support agent",
  "description": "Answers questions about orders",
  "version": "1.0.0",
  "tags": ["support"],
  "examples": ["Where is my order?"]
}`;

function errorsOf(e: unknown): FieldError[] {
  if (e instanceof ApiError) {
    const detail = (e.body as { detail?: unknown } | undefined)?.detail;
    if (Array.isArray(detail)) return detail as FieldError[];
    return [{ loc: [], msg: typeof detail === "string" ? detail : e.message }];
  }
  return [{ loc: [], msg: (e as Error).message }];
}

export function FlowSettingsDialog(props: {
  flow: FlowRecord;
  onSaved: (flow: FlowRecord) => void;
  onClose: () => void;
  /** the caller may not change the flow (a viewer or run-only member): why, shown; every field disabled */
  readOnly?: string;
}) {
  const { flow } = props;
  const [description, setDescription] = useState(flow.description ?? "");
  const [endpoint, setEndpoint] = useState(flow.endpoint_name ?? "");
  const [locked, setLocked] = useState(Boolean(flow.locked));
  const [folder, setFolder] = useState(flow.folder_id ?? "");
  const [projects, setProjects] = useState<Project[]>([]);
  const [flowType, setFlowType] = useState<string>((flow.flow_type as string) || "workflow");
  const [enabled, setEnabled] = useState<boolean>(Boolean(flow.a2a_enabled));
  const [text, setText] = useState(flow.a2a_card_overrides ? JSON.stringify(flow.a2a_card_overrides, null, 2) : "");
  const [serverOn, setServerOn] = useState<boolean | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [busy, setBusy] = useState(false);
  const parsed = useMemo(() => parseOverrides(text), [text]);
  const overrides = "value" in parsed ? parsed.value : null;
  const localError = "error" in parsed ? parsed.error : null;
  const key = localError ? null : JSON.stringify(overrides);

  useEffect(() => {
    api
      .listProjects()
      .then(setProjects)
      .catch(() => undefined);
    api
      .config()
      .then((c) => setServerOn(Boolean(c.a2a_enabled)))
      .catch(() => setServerOn(false));
  }, []);

  // the live preview: the server builds the card with the unsaved overrides (debounced while typing)
  useEffect(() => {
    if (!serverOn || key === null) return;
    const ctrl = new AbortController();
    const timer = setTimeout(() => {
      request<Preview>(`/api/v1/a2a/${flow.id}/card-preview`, { method: "POST", json: { a2a_card_overrides: overrides }, signal: ctrl.signal })
        .then((p) => {
          setPreview(p);
          setErrors([]);
        })
        .catch((e) => {
          if ((e as Error).name !== "AbortError") setErrors(errorsOf(e));
        });
    }, 250);
    return () => {
      clearTimeout(timer);
      ctrl.abort();
    };
  }, [key, serverOn, flow.id]);

  const cardUrl = preview?.cardUrl ?? `${window.location.origin}/api/v1/a2a/${flow.id}/.well-known/agent-card.json`;
  const save = async () => {
    setBusy(true);
    try {
      const updated = await api.updateFlow(flow.id, {
        description: description.trim() || null,
        endpoint_name: endpoint.trim() || null,
        locked,
        ...(folder && folder !== flow.folder_id ? { folder_id: folder } : {}),
        flow_type: flowType,
        a2a_enabled: enabled,
        a2a_card_overrides: overrides && Object.keys(overrides).length ? overrides : null,
      });
      props.onSaved(updated);
      notify("success", "Flow settings saved");
      props.onClose();
    } catch (e) {
      setErrors(errorsOf(e));
    } finally {
      setBusy(false);
    }
  };
  const agentOk = flowType === "agent";
  return (
    <Modal
      title="Flow settings"
      onClose={props.onClose}
      wide
      testId="flow-settings"
      readOnly={props.readOnly}
      footer={
        <>
          <button className="btn" onClick={props.onClose}>
            Cancel
          </button>
          <button className="btn btn-primary" disabled={Boolean(props.readOnly) || busy || localError !== null || errors.length > 0} onClick={() => void save()}>
            Save
          </button>
        </>
      }
    >
      <div className="flow-settings">
        <div className="flow-settings-form">
          <label className="field">
            <span>Description</span>
            <textarea aria-label="Description" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <label className="field">
            <span>Endpoint name</span>
            <input
              aria-label="Endpoint name"
              value={endpoint}
              placeholder="my-flow"
              pattern="[A-Za-z0-9_-]*"
              title="Letters, digits, - and _"
              onChange={(e) => {
                setEndpoint(e.target.value);
                setErrors([]);
              }}
            />
          </label>
          <p className="muted small">
            Run it as <code>/api/v1/run/{endpoint.trim() || flow.id}</code>: letters, digits, - and _, unique among your flows.
          </p>
          {projects.length > 0 && (
            <label className="field">
              <span>Project</span>
              <select aria-label="Project" value={folder} onChange={(e) => setFolder(e.target.value)}>
                {!folder && <option value="">(none)</option>}
                {projects.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label className="field field-inline">
            <input type="checkbox" aria-label="Lock the flow" checked={locked} onChange={(e) => setLocked(e.target.checked)} />
            <span>Locked: the canvas cannot be edited until it is unlocked</span>
          </label>
          <label className="field">
            <span>Flow type</span>
            <select aria-label="Flow type" value={flowType} onChange={(e) => setFlowType(e.target.value)}>
              <option value="workflow">Workflow</option>
              <option value="agent">Agent</option>
            </select>
          </label>
          <label className="field field-inline">
            <input type="checkbox" aria-label="Publish over A2A" checked={enabled} disabled={!agentOk && !enabled} onChange={(e) => setEnabled(e.target.checked)} />
            <span>Publish over A2A</span>
          </label>
          {!agentOk && <p className="muted small">Only agent flows are published over A2A: set the type to Agent first.</p>}
          {serverOn === false && (
            <p className="banner banner-warn" role="status" data-testid="a2a-off">
              The A2A surface is off on this server (SERVICE_A2A_ENABLED): the settings are kept, but no card is served.
            </p>
          )}
          <label className="field">
            <span>Agent card overrides (JSON)</span>
            <textarea
              className="mono card-overrides"
              aria-label="Card overrides"
              rows={8}
              spellCheck={false}
              value={text}
              placeholder={PLACEHOLDER}
              onChange={(e) => setText(e.target.value)}
            />
          </label>
          <p className="muted small">
            Members: name, description, version (strings), tags, examples (lists of strings). Left out, the card uses the flow&apos;s name
            and description and the server&apos;s version.
          </p>
          <div className="field">
            <span>Card URL</span>
            <div className="code-block">
              <pre data-testid="card-url" tabIndex={0}>
                {cardUrl}
              </pre>
              <CopyButton text={cardUrl} label="Copy URL" />
            </div>
            {!(agentOk && enabled) && <p className="muted small">The URL answers once the flow is saved as a published agent.</p>}
          </div>
        </div>
        <div className="flow-settings-preview">
          <h3>Card preview</h3>
          {localError && (
            <p className="form-error" role="alert" data-testid="card-json-error">
              {localError}
            </p>
          )}
          {!localError && errors.length > 0 && (
            <ul className="form-error" role="alert" data-testid="card-errors">
              {errors.map((e, i) => (
                <li key={i}>
                  {e.loc.length ? `${e.loc.join(".")}: ` : ""}
                  {e.msg}
                </li>
              ))}
            </ul>
          )}
          {serverOn && preview ? (
            <pre className="card-preview mono" data-testid="card-preview" aria-busy={false}>
              {JSON.stringify(preview.card, null, 2)}
            </pre>
          ) : serverOn === null || (serverOn && !preview && errors.length === 0) ? (
            <p aria-busy="true">Loading…</p>
          ) : null}
        </div>
      </div>
    </Modal>
  );
}
