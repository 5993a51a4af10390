import { useCallback, useEffect, useState } from "react";
import { api, type ApiKey, type Variable } from "../api/client";
import { CopyButton } from "../components/CopyButton";
import { ConfirmDialog, DialogFooter, Modal } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { ListState, RowButton, SectionHead, TabbedPage, TableHead } from "../components/ListPage";
import { TopBar } from "../components/TopBar";
import { useSession } from "../session";
import { McpServersTab } from "./McpServers";

const TABS = [
  { id: "api-keys", label: "API keys" },
  { id: "variables", label: "Global variables" },
  { id: "mcp-servers", label: "MCP servers" },
  { id: "profile", label: "Profile" },
];

export function SettingsPage({ tab }: { tab: string }) {
  return (
    <div className="app-shell">
      <TopBar />
      <TabbedPage label="Settings" base="/settings" tabs={TABS} tab={tab}>
          {tab === "variables" ? (
            <VariablesTab />
          ) : tab === "profile" ? (
            <ProfileTab />
          ) : tab === "mcp-servers" ? (
            <McpServersTab />
          ) : (
            <ApiKeysTab />
          )}
      </TabbedPage>
    </div>
  );
}

/** Create an API key; the value is shown once. Used by Settings and the API access panel. */
export function CreateKeyDialog({ onClose, onCreated }: { onClose: () => void; onCreated?: (key: ApiKey) => void }) {
  const [created, setCreated] = useState<ApiKey | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={created ? "API key created" : "Create API key"} onClose={onClose}>
      {created ? (
        <div>
          <p>Copy this key now: it will not be shown again.</p>
          <div className="secret-row">
            <code data-testid="new-api-key">{created.api_key}</code>
            <CopyButton text={created.api_key} label="Copy key" />
          </div>
          <div className="modal-footer">
            <button className="btn btn-primary" onClick={onClose} autoFocus>
              Done
            </button>
          </div>
        </div>
      ) : (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const name = String(new FormData(e.currentTarget).get("name") ?? "").trim();
            setBusy(true);
            try {
              const key = await api.createKey(name || "API key");
              setCreated(key);
              onCreated?.(key);
            } catch (err) {
              notifyError(err, "Could not create the key");
            } finally {
              setBusy(false);
            }
          }}
        >
          <label className="field">
            <span>Name</span>
            <input name="name" placeholder="e.g. my-script" autoFocus />
          </label>
          <DialogFooter onClose={onClose} busy={busy} submit="Create key" />
        </form>
      )}
    </Modal>
  );
}

function ApiKeysTab() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<ApiKey | null>(null);
  const load = useCallback(() => {
    api
      .listKeys()
      .then((r) => setKeys(r.api_keys ?? []))
      .catch((e) => {
        notifyError(e, "Could not load your API keys");
        setKeys([]);
      });
  }, []);
  useEffect(load, [load]);
  return (
    <section aria-labelledby="keys-title">
      <SectionHead id="keys-title" title="API keys">
        <button className="btn btn-primary" onClick={() => setCreating(true)}>
          Create API key
        </button>
      </SectionHead>
      <p className="muted">Keys authenticate calls to the run and webhook endpoints (header <code>x-api-key</code>).</p>
      <ListState items={keys} empty="No API keys yet.">
        {(keys) => (
          <table className="table">
            <TableHead columns={["Name", "Key", "Created", "Last used", "Uses"]} />
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.name || "—"}</td>
                  <td>
                    <code>{k.api_key}</code>
                  </td>
                  <td>{k.created_at ? new Date(k.created_at).toLocaleDateString() : "—"}</td>
                  <td>{k.last_used_at ? new Date(k.last_used_at).toLocaleString() : "never"}</td>
                  <td>{k.total_uses ?? 0}</td>
                  <td>
                    <button className="btn btn-small btn-danger-text" onClick={() => setDeleting(k)} aria-label={`Delete key ${k.name ?? k.id}`}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListState>
      {creating && <CreateKeyDialog onClose={() => setCreating(false)} onCreated={load} />}
      {deleting && (
        <ConfirmDialog
          title="Delete API key"
          text={`Delete the key “${deleting.name ?? deleting.api_key}”? Programs using it will stop working.`}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await api.deleteKey(deleting.id);
              setDeleting(null);
              notify("success", "API key deleted.");
              load();
            } catch (e) {
              notifyError(e, "Could not delete the key");
            }
          }}
        />
      )}
    </section>
  );
}

function VariableDialog({ variable, onClose, onSaved }: { variable?: Variable; onClose: () => void; onSaved: () => void }) {
  const [type, setType] = useState(variable?.type ?? "Credential");
  return (
    <Modal title={variable ? `Edit ${variable.name}` : "New global variable"} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          const name = String(fd.get("name") ?? "").trim();
          const value = String(fd.get("value") ?? "");
          try {
            if (variable) {
              const patch: { name?: string; value?: string } = {};
              if (name !== variable.name) patch.name = name;
              if (value) patch.value = value;
              await api.updateVariable(variable.id, patch);
            } else {
              await api.createVariable({ name, value, type });
            }
            onSaved();
            onClose();
          } catch (err) {
            notifyError(err, "Could not save the variable");
          }
        }}
      >
        <label className="field">
          <span>Name</span>
          <input name="name" defaultValue={variable?.name} required autoFocus />
        </label>
        {!variable && (
          <fieldset className="field">
            <legend>Type</legend>
            <div className="segmented" role="radiogroup">
              {["Credential", "Generic"].map((t) => (
                <label key={t} className={type === t ? "active" : ""}>
                  <input type="radio" name="type" value={t} checked={type === t} onChange={() => setType(t)} />
                  {t}
                </label>
              ))}
            </div>
          </fieldset>
        )}
        <label className="field">
          <span>Value{variable ? " (leave empty to keep the current value)" : ""}</span>
          <input
            name="value"
            type={type === "Credential" ? "password" : "text"}
            defaultValue={variable && variable.type !== "Credential" ? variable.value ?? "" : ""}
            required={!variable}
            autoComplete="off"
          />
        </label>
        {type === "Credential" && <p className="muted small">Credential values are stored encrypted and never shown again.</p>}
        <DialogFooter onClose={onClose} submit="Save" />
      </form>
    </Modal>
  );
}

function VariablesTab() {
  const [vars, setVars] = useState<Variable[] | null>(null);
  const [editing, setEditing] = useState<Variable | "new" | null>(null);
  const [deleting, setDeleting] = useState<Variable | null>(null);
  const load = useCallback(() => {
    api
      .listVariables()
      .then(setVars)
      .catch((e) => {
        notifyError(e, "Could not load the variables");
        setVars([]);
      });
  }, []);
  useEffect(load, [load]);
  return (
    <section aria-labelledby="vars-title">
      <SectionHead id="vars-title" title="Global variables">
        <button className="btn btn-primary" onClick={() => setEditing("new")}>
          New variable
        </button>
      </SectionHead>
      <p className="muted">Bind secret fields of components to a variable instead of pasting the secret into the flow.</p>
      <ListState items={vars} empty="No variables yet.">
        {(vars) => (
          <table className="table">
            <TableHead columns={["Name", "Type", "Value"]} />
            <tbody>
              {vars.map((v) => (
                <tr key={v.id}>
                  <td>{v.name}</td>
                  <td>{v.type ?? "Credential"}</td>
                  <td>{v.type === "Generic" ? <code>{v.value}</code> : <span className="muted">hidden</span>}</td>
                  <td className="row-actions">
                    <RowButton label="Edit" name={v.name} onClick={() => setEditing(v)} />
                    <RowButton label="Delete" name={v.name} danger onClick={() => setDeleting(v)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListState>
      {editing && <VariableDialog variable={editing === "new" ? undefined : editing} onClose={() => setEditing(null)} onSaved={load} />}
      {deleting && (
        <ConfirmDialog
          title="Delete variable"
          text={`Delete “${deleting.name}”? Components bound to it will no longer find a value.`}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await api.deleteVariable(deleting.id);
              setDeleting(null);
              load();
            } catch (e) {
              notifyError(e, "Could not delete the variable");
            }
          }}
        />
      )}
    </section>
  );
}

function ProfileTab() {
  const session = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-labelledby="profile-title">
      <h1 id="profile-title">Profile</h1>
      <p>
        Signed in as <strong>{session.user?.username}</strong>
        {session.user?.is_superuser ? " (superuser)" : ""}.
      </p>
      <form
        className="narrow-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const fd = new FormData(form);
          const current = String(fd.get("current") ?? "");
          const next = String(fd.get("password") ?? "");
          const confirm = String(fd.get("confirm") ?? "");
          setError(null);
          if (next !== confirm) return setError("The new passwords do not match.");
          if (!session.user) return;
          setBusy(true);
          try {
            await api.resetPassword(session.user.id, current, next);
            form.reset();
            notify("success", "Password changed.");
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <h2>Change password</h2>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <label className="field">
          <span>Current password</span>
          <input name="current" type="password" autoComplete="current-password" required />
        </label>
        <label className="field">
          <span>New password</span>
          <input name="password" type="password" autoComplete="new-password" required />
        </label>
        <label className="field">
          <span>Repeat new password</span>
          <input name="confirm" type="password" autoComplete="new-password" required />
        </label>
        <button className="btn btn-primary" disabled={busy}>
          Change password
        </button>
      </form>
    </section>
  );
}
