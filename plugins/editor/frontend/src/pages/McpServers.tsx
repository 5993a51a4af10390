// Settings → MCP servers: the servers the MCP Tools component can use. Header and environment values
// are secrets: the server keeps them encrypted and answers them masked.
import { useCallback, useEffect, useMemo, useState } from "react";
import { api, type McpServer, type McpServerBody } from "../api/client";
import { ListState, RowButton, SectionHead, TableHead } from "../components/ListPage";
import { ConfirmDialog, Modal } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { latestOnly } from "../lib/latest";
import { useSession } from "../session";

function pairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

function AddServerDialog({ onClose, onSaved }: { onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<"http" | "stdio">("http");
  const [url, setUrl] = useState("");
  const [headers, setHeaders] = useState("");
  const [command, setCommand] = useState("");
  const [args, setArgs] = useState("");
  const [env, setEnv] = useState("");
  const [busy, setBusy] = useState(false);
  const admin = Boolean(useSession().user?.is_superuser);

  async function save() {
    const body: McpServerBody =
      kind === "http"
        ? { url: url.trim(), headers: pairs(headers) }
        : { command: command.trim(), args: args.split("\n").map((a) => a.trim()).filter(Boolean), env: pairs(env) };
    setBusy(true);
    try {
      await api.addMcpServer(name.trim(), body);
      notify("success", `MCP server ${name.trim()} added`);
      onSaved();
      onClose();
    } catch (e) {
      notifyError(e, "Could not add the MCP server");
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal title="Add MCP server" onClose={onClose}>
      <label className="field">
        <span>Name</span>
        <input aria-label="Server name" value={name} onChange={(e) => setName(e.target.value)} autoFocus />
      </label>
      <div className="segmented" role="radiogroup" aria-label="Server kind">
        <button type="button" role="radio" aria-checked={kind === "http"} className={kind === "http" ? "active" : ""} onClick={() => setKind("http")}>
          HTTP
        </button>
        <button type="button" role="radio" aria-checked={kind === "stdio"} className={kind === "stdio" ? "active" : ""} onClick={() => setKind("stdio")}>
          Command (stdio)
        </button>
      </div>
      {kind === "http" ? (
        <>
          <label className="field">
            <span>URL (Streamable HTTP, or ending in /sse)</span>
            <input aria-label="Server URL" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/mcp" />
          </label>
          <label className="field">
            <span>Headers (one NAME=value a line; kept encrypted)</span>
            <textarea aria-label="Server headers" value={headers} onChange={(e) => setHeaders(e.target.value)} rows={3} />
          </label>
        </>
      ) : (
        <>
          <p className="muted small" role="note">
            A command server runs a program on this server, always inside the sandbox (no host files, no network
            unless an admin allows them).{" "}
            {admin
              ? "As a superuser you may add one."
              : "Only superusers may add one, unless an admin allows the command (SERVICE_MCP_STDIO_ALLOWED_COMMANDS); ask an admin, or use an HTTP server."}
          </p>
          <label className="field">
            <span>Command</span>
            <input aria-label="Server command" value={command} onChange={(e) => setCommand(e.target.value)} placeholder="uvx" />
          </label>
          <label className="field">
            <span>Arguments (one a line)</span>
            <textarea aria-label="Server arguments" value={args} onChange={(e) => setArgs(e.target.value)} rows={3} />
          </label>
          <label className="field">
            <span>Environment (one NAME=value a line; kept encrypted)</span>
            <textarea aria-label="Server environment" value={env} onChange={(e) => setEnv(e.target.value)} rows={3} />
          </label>
        </>
      )}
      <div className="modal-footer">
        <button className="btn" onClick={onClose}>
          Cancel
        </button>
        <button className="btn btn-primary" onClick={save} disabled={busy || !name.trim() || (kind === "http" ? !url.trim() : !command.trim())}>
          Add
        </button>
      </div>
    </Modal>
  );
}

export function McpServersTab() {
  const [servers, setServers] = useState<McpServer[] | null>(null);
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<McpServer | null>(null);

  const startLoad = useMemo(latestOnly, []);
  const load = useCallback(async () => {
    const isNewest = startLoad();
    try {
      const got = await api.mcpServers();
      if (isNewest()) setServers(got);
    } catch (e) {
      if (!isNewest()) return;
      notifyError(e, "Could not load your MCP servers");
      setServers([]);
    }
  }, [startLoad]);

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section aria-label="MCP servers">
      <SectionHead title="MCP servers" className="settings-header">
        <button className="btn btn-primary" onClick={() => setAdding(true)}>
          Add MCP server
        </button>
      </SectionHead>
      <p className="muted">Servers whose tools your flows can use with the MCP Tools component.</p>
      <ListState items={servers} empty="No MCP servers yet." emptyClass="muted">
        {(servers) => (
          <table className="table" aria-label="Your MCP servers">
            <TableHead columns={["Name", "Kind", "Where"]} />
            <tbody>
              {servers.map((s) => (
                <tr key={s.id}>
                  <td>{s.name}</td>
                  <td>{s.transport}</td>
                  <td className="small">{s.url ?? [s.command, ...(s.args ?? [])].join(" ")}</td>
                  <td>
                    <RowButton label="Delete" name={s.name} danger onClick={() => setDeleting(s)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListState>
      {adding && <AddServerDialog onClose={() => setAdding(false)} onSaved={load} />}
      {deleting && (
        <ConfirmDialog
          title="Delete MCP server"
          text={`Delete “${deleting.name}”? Flows that use it will fail until it is added again.`}
          confirmLabel="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await api.deleteMcpServer(deleting.name);
              setDeleting(null);
              await load();
            } catch (e) {
              notifyError(e, "Could not delete the MCP server");
            }
          }}
        />
      )}
    </section>
  );
}
