// A project's MCP server: which flows are tools, their action names and descriptions, the auth,
// and the exact JSON each MCP client takes (copied, never written from the browser).
import { useCallback, useEffect, useMemo, useState } from "react";
import { api, type McpAuthSettings, type McpInstall, type McpToolSetting, type McpUrls } from "../api/client";
import { CopyButton } from "../components/CopyButton";
import { notify, notifyError } from "../components/toast";
import { latestOnly } from "../lib/latest";
import type { Project } from "../lib/types";

const CLIENTS = [
  { id: "cursor", label: "Cursor" },
  { id: "windsurf", label: "Windsurf" },
  { id: "claude", label: "Claude" },
  { id: "vscode", label: "VS Code" },
];

export function McpServerTab({ project }: { project: Project }) {
  const [tools, setTools] = useState<McpToolSetting[] | null>(null);
  const [auth, setAuth] = useState("apikey");
  // the other members of auth_settings (OAuth), kept as loaded so a save never drops them
  const [oauth, setOauth] = useState<McpAuthSettings>({});
  const [clientSecret, setClientSecret] = useState("");
  const [dirty, setDirty] = useState(false);
  const [urls, setUrls] = useState<McpUrls | null>(null);
  const [client, setClient] = useState("cursor");
  const [transport, setTransport] = useState("streamablehttp");
  const [snippet, setSnippet] = useState<McpInstall | null>(null);

  const startLoad = useMemo(latestOnly, []);
  const load = useCallback(async () => {
    const isNewest = startLoad();
    try {
      const [listed, composer] = await Promise.all([api.mcpProjectTools(project.id), api.mcpComposerUrl(project.id)]);
      if (!isNewest()) return;
      setTools(listed.tools);
      setAuth(listed.auth_settings?.auth_type ?? "apikey");
      setOauth(listed.auth_settings ?? {});
      setClientSecret("");
      setUrls(composer);
      setDirty(false);
    } catch (e) {
      if (!isNewest()) return;
      notifyError(e, "Could not load the MCP server settings");
      setTools([]);
    }
  }, [project.id, startLoad]);

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    let live = true;
    api
      .mcpInstall(project.id, client, transport)
      .then((r) => live && setSnippet(r))
      .catch((e) => notifyError(e, "Could not build the client configuration"));
    return () => {
      live = false;
    };
  }, [project.id, client, transport, auth, dirty]);

  const edit = (id: string, patch: Partial<McpToolSetting>) => {
    setTools((list) => (list ?? []).map((t) => (t.id === id ? { ...t, ...patch } : t)));
    setDirty(true);
  };

  async function save() {
    if (!tools) return;
    try {
      const settings = tools.map(({ id, mcp_enabled, action_name, action_description }) => ({
        id,
        mcp_enabled,
        action_name: action_name || null,
        action_description: action_description || null,
      }));
      const authSettings: McpAuthSettings = { ...oauth, auth_type: auth };
      if (auth === "oauth" && clientSecret) authSettings.oauth_client_secret = clientSecret; // empty: keep the stored one
      const answer = await api.updateMcpProject(project.id, settings, authSettings);
      notify(answer.error_message ? "info" : "success", answer.error_message ?? "MCP server settings saved");
      await load();
    } catch (e) {
      notifyError(e, "Could not save the MCP server settings");
    }
  }

  const snippetText = snippet ? JSON.stringify(snippet.config, null, 2) : "";
  return (
    <section className="mcp-server" aria-label="MCP server">
      <p className="muted">
        Every flow switched on below is a tool of this project's MCP server. Desktop assistants and IDEs call them with the
        configuration at the bottom.
      </p>
      <h2>Tools</h2>
      {tools === null ? (
        <p className="muted">Loading…</p>
      ) : tools.length === 0 ? (
        <p className="muted">This project has no flows yet.</p>
      ) : (
        <table className="mcp-tools">
          <thead>
            <tr>
              <th>Tool</th>
              <th>Flow</th>
              <th>Action name</th>
              <th>Action description</th>
            </tr>
          </thead>
          <tbody>
            {tools.map((t) => (
              <tr key={t.id}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Use ${t.name} as a tool`}
                    checked={t.mcp_enabled}
                    onChange={(e) => edit(t.id, { mcp_enabled: e.target.checked })}
                  />
                </td>
                <td>{t.name}</td>
                <td>
                  <input
                    aria-label={`Action name of ${t.name}`}
                    value={t.action_name ?? ""}
                    placeholder="(from the flow name)"
                    onChange={(e) => edit(t.id, { action_name: e.target.value })}
                  />
                </td>
                <td>
                  <input
                    aria-label={`Action description of ${t.name}`}
                    value={t.action_description ?? ""}
                    placeholder={t.description ?? ""}
                    onChange={(e) => edit(t.id, { action_description: e.target.value })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Authentication</h2>
      <label className="field">
        <span>Who may connect</span>
        <select
          aria-label="MCP authentication"
          value={auth}
          onChange={(e) => {
            setAuth(e.target.value);
            setDirty(true);
          }}
        >
          <option value="apikey">Your API key (x-api-key)</option>
          <option value="oauth">OAuth (tokens from your authorization server, or your API key)</option>
          <option value="none">Anyone with the URL (no authentication)</option>
        </select>
      </label>
      {auth === "oauth" && (
        <fieldset className="mcp-oauth" aria-label="OAuth settings">
          <p className="muted small">
            MCP clients get a token from your authorization server; this server checks each token with the
            authorization server's token introspection, using the client below.
          </p>
          {(
            [
              ["oauth_server_url", "Authorization server (issuer URL)", "https://auth.example.com"],
              ["oauth_client_id", "Client ID", ""],
              ["oauth_mcp_scope", "Required scope", "mcp"],
            ] as const
          ).map(([key, label, placeholder]) => (
            <label className="field" key={key}>
              <span>{label}</span>
              <input
                aria-label={label}
                value={oauth[key] ?? ""}
                placeholder={placeholder}
                onChange={(e) => {
                  setOauth((o) => ({ ...o, [key]: e.target.value || null }));
                  setDirty(true);
                }}
              />
            </label>
          ))}
          <label className="field">
            <span>Client secret</span>
            <input
              aria-label="Client secret"
              type="password"
              value={clientSecret}
              placeholder="(unchanged)"
              autoComplete="new-password"
              onChange={(e) => {
                setClientSecret(e.target.value);
                setDirty(true);
              }}
            />
          </label>
        </fieldset>
      )}
      <div className="row-actions">
        <button className="btn btn-primary" onClick={save} disabled={!dirty}>
          Save
        </button>
      </div>
      <h2>Connect a client</h2>
      {urls && (
        <p className="small">
          Streamable HTTP: <code data-testid="mcp-streamable-url">{urls.streamable_http_url}</code> · SSE:{" "}
          <code>{urls.legacy_sse_url}</code>
        </p>
      )}
      <div className="segmented" role="radiogroup" aria-label="MCP client">
        {CLIENTS.map((c) => (
          <button key={c.id} type="button" role="radio" aria-checked={client === c.id} className={client === c.id ? "active" : ""} onClick={() => setClient(c.id)}>
            {c.label}
          </button>
        ))}
      </div>
      <label className="field">
        <span>Transport</span>
        <select aria-label="MCP transport" value={transport} onChange={(e) => setTransport(e.target.value)}>
          <option value="streamablehttp">Streamable HTTP</option>
          <option value="sse">SSE (legacy)</option>
        </select>
      </label>
      <pre className="code-block" data-testid="mcp-snippet">{snippetText}</pre>
      <div className="row-actions">
        <CopyButton text={snippetText} label="Copy configuration" />
        {auth !== "none" && <span className="muted small">Replace &lt;YOUR_API_KEY&gt; with one of your API keys (Settings → API keys).</span>}
      </div>
    </section>
  );
}
