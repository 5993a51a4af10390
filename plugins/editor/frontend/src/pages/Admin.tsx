// The reference's Admin page for superusers: the users (search, pages of 10), a new user, edit (name,
// password reset, active, superuser), activate/deactivate and superuser toggles in the list, delete.
// Over /api/v1/users; the route and its link are hidden from everyone else (the API refuses them anyway).
import { useCallback, useEffect, useMemo, useState } from "react";
import { pagesApi, type AdminUser, type UserPage } from "../api/pages";
import { ConfirmDialog, DialogFooter, Modal } from "../components/Modal";
import { TopBar } from "../components/TopBar";
import { notify, notifyError } from "../components/toast";
import { latestOnly } from "../lib/latest";
import { useSession } from "../session";

const PAGE = 10;

type Dialog = { kind: "new" } | { kind: "edit"; user: AdminUser } | { kind: "delete"; user: AdminUser } | null;

export function AdminPage() {
  const session = useSession();
  const [page, setPage] = useState(0);
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  const [data, setData] = useState<UserPage | null>(null);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [saving, setSaving] = useState<string | null>(null); // a user whose change is being saved
  const startLoad = useMemo(latestOnly, []);

  const load = useCallback(async () => {
    const isNewest = startLoad();
    try {
      const found = await pagesApi.users(page * PAGE, PAGE, query);
      if (isNewest()) setData(found);
    } catch (e) {
      if (isNewest()) notifyError(e, "Could not load the users");
    }
  }, [page, query, startLoad]);

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    if (search.trim() === query) return; // typing only: paging keeps its page
    const t = setTimeout(() => (setPage(0), setQuery(search.trim())), 250);
    return () => clearTimeout(t);
  }, [search, query]);

  if (!session.user?.is_superuser)
    return (
      <div className="app-shell">
        <TopBar />
        <main className="admin-page">
          <h1>Admin</h1>
          <p>Only superusers can manage users.</p>
        </main>
      </div>
    );

  async function change(user: AdminUser, patch: { is_active?: boolean; is_superuser?: boolean }) {
    // shown at once; the list is read again after, so a refused change springs back
    setData((d) => d && { ...d, users: d.users.map((u) => (u.id === user.id ? { ...u, ...patch } : u)) });
    setSaving(user.id);
    try {
      await pagesApi.updateUser(user.id, patch);
      notify("success", `Updated ${user.username}.`);
    } catch (e) {
      notifyError(e, `Could not update ${user.username}`);
    }
    await load();
    setSaving(null);
  }

  const total = data?.total_count ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE));
  return (
    <div className="app-shell">
      <TopBar />
      <main className="admin-page">
        <h1>Admin</h1>
        <p className="muted">Manage the users of this server: their access, their superuser rights and their passwords.</p>
        <div className="table-toolbar">
          <input type="search" className="search" placeholder="Search users" aria-label="Search users" value={search} onChange={(e) => setSearch(e.target.value)} />
          <button className="btn btn-primary" onClick={() => setDialog({ kind: "new" })}>
            New user
          </button>
        </div>
        {data === null ? (
          <p className="muted">Loading…</p>
        ) : data.users.length === 0 ? (
          <p className="muted">{query ? `No user matches “${query}”.` : "No users."}</p>
        ) : (
          <table className="data-table" aria-label="Users">
            <thead>
              <tr>
                <th scope="col">Username</th>
                <th scope="col">Active</th>
                <th scope="col">Superuser</th>
                <th scope="col">Created</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {data.users.map((u) => {
                const self = u.id === session.user?.id;
                return (
                  <tr key={u.id} data-testid={`user-row-${u.username}`}>
                    <td>{u.username}</td>
                    <td>
                      <input type="checkbox" aria-label={`${u.username} is active`} checked={!!u.is_active} disabled={self || saving === u.id} onChange={(e) => void change(u, { is_active: e.target.checked })} />
                    </td>
                    <td>
                      <input type="checkbox" aria-label={`${u.username} is a superuser`} checked={!!u.is_superuser} disabled={self || saving === u.id} onChange={(e) => void change(u, { is_superuser: e.target.checked })} />
                    </td>
                    <td className="small">{u.create_at ? new Date(u.create_at).toLocaleString() : ""}</td>
                    <td className="small">{u.last_login_at ? new Date(u.last_login_at).toLocaleString() : "never"}</td>
                    <td className="actions">
                      <button className="btn btn-small" aria-label={`Edit ${u.username}`} onClick={() => setDialog({ kind: "edit", user: u })}>
                        Edit
                      </button>{" "}
                      <button className="btn btn-small btn-danger-text" aria-label={`Delete ${u.username}`} disabled={self} onClick={() => setDialog({ kind: "delete", user: u })}>
                        Delete
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        <div className="pager" aria-label="Pages">
          <span className="muted small" data-testid="users-total">
            {total} user{total === 1 ? "" : "s"} · page {page + 1} of {pages}
          </span>
          <button className="btn btn-small" disabled={page === 0} onClick={() => setPage((p) => p - 1)}>
            Previous
          </button>
          <button className="btn btn-small" disabled={page + 1 >= pages} onClick={() => setPage((p) => p + 1)}>
            Next
          </button>
        </div>
      </main>
      {(dialog?.kind === "new" || dialog?.kind === "edit") && (
        <UserDialog
          user={dialog.kind === "edit" ? dialog.user : null}
          self={dialog.kind === "edit" && dialog.user.id === session.user?.id}
          onClose={() => setDialog(null)}
          onSaved={async () => {
            setDialog(null);
            await load();
          }}
        />
      )}
      {dialog?.kind === "delete" && (
        <ConfirmDialog
          title="Delete user"
          text={`Delete “${dialog.user.username}” and everything they own? This cannot be undone.`}
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            try {
              await pagesApi.deleteUser(dialog.user.id);
              setDialog(null);
              notify("success", "User deleted.");
              await load();
            } catch (e) {
              notifyError(e, "Could not delete the user");
            }
          }}
        />
      )}
    </div>
  );
}

function UserDialog({ user, self, onClose, onSaved }: { user: AdminUser | null; self: boolean; onClose: () => void; onSaved: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Modal title={user ? `Edit ${user.username}` : "New user"} onClose={onClose} testId="user-dialog">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          const username = String(fd.get("username") ?? "").trim();
          const password = String(fd.get("password") ?? "");
          const confirm = String(fd.get("confirm") ?? "");
          if (password !== confirm) return setError("The passwords do not match.");
          const flags = self ? {} : { is_active: fd.get("active") === "on", is_superuser: fd.get("superuser") === "on" };
          setBusy(true);
          setError(null);
          try {
            if (user) {
              await pagesApi.updateUser(user.id, { ...(username !== user.username ? { username } : {}), ...(password ? { password } : {}), ...flags });
              notify("success", password ? `Saved ${username}; the new password applies at once.` : `Saved ${username}.`);
            } else {
              const created = await pagesApi.createUser(username, password);
              await pagesApi.updateUser(created.id, flags); // sign-up creates users inactive unless the server says otherwise
              notify("success", `Created ${username}.`);
            }
            await onSaved();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <label className="field">
          <span>Username</span>
          <input name="username" defaultValue={user?.username ?? ""} required autoFocus autoComplete="off" />
        </label>
        <label className="field">
          <span>{user ? "New password (leave empty to keep it)" : "Password"}</span>
          <input name="password" type="password" required={!user} autoComplete="new-password" />
        </label>
        <label className="field">
          <span>Confirm the password</span>
          <input name="confirm" type="password" required={!user} autoComplete="new-password" />
        </label>
        {!self && (
          <div className="row">
            <label className="check">
              <input type="checkbox" name="active" defaultChecked={user ? !!user.is_active : true} /> Active
            </label>
            <label className="check">
              <input type="checkbox" name="superuser" defaultChecked={!!user?.is_superuser} /> Superuser
            </label>
          </div>
        )}
        <DialogFooter onClose={onClose} busy={busy} submit={user ? "Save" : "Create"} />
      </form>
    </Modal>
  );
}
