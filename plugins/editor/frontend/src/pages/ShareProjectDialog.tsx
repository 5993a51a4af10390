// Share a project with a team from the project list (the owner, or a member whose role there is admin):
// the project's current team shares with their roles, "Stop sharing", and a new share at a role.
import { useCallback, useEffect, useState } from "react";
import { api, type Share, type Team } from "../api/client";
import { Modal } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import type { Project } from "../lib/types";

/** The share levels, named by the built-in role each one is. */
export const ROLES: [level: string, role: string][] = [
  ["read", "viewer"],
  ["execute", "run-only"],
  ["write", "developer"],
  ["admin", "admin"],
];

export function roleOf(level: string): string {
  return ROLES.find(([l]) => l === level)?.[1] ?? level;
}

export function ShareProjectDialog({ project, teams, onClose, onChanged }: { project: Project; teams: Team[]; onClose: () => void; onChanged: () => void }) {
  const [shares, setShares] = useState<Share[] | null>(null);
  const [team, setTeam] = useState(teams[0]?.id ?? "");
  const [level, setLevel] = useState("execute");
  const [busy, setBusy] = useState(false);

  const load = useCallback(() => {
    api.resourceShares("project", project.id).then(
      (list) => setShares(list.filter((s) => s.scope === "team")),
      (e) => (notifyError(e, "Could not load the project's shares"), setShares([])),
    );
  }, [project.id]);
  useEffect(load, [load]);

  async function share(e: React.FormEvent) {
    e.preventDefault();
    if (!team) return;
    setBusy(true);
    try {
      await api.shareProject(project.id, team, level);
      notify("success", `Shared “${project.name}” with ${teams.find((t) => t.id === team)?.team_name ?? "the team"} as ${roleOf(level)}.`);
      load();
      onChanged();
    } catch (err) {
      notifyError(err, "Could not share the project");
    } finally {
      setBusy(false);
    }
  }

  async function stop(s: Share) {
    try {
      await api.deleteShare(s.id);
      load();
      onChanged();
    } catch (err) {
      notifyError(err, "Could not stop sharing");
    }
  }

  const teamName = (id: string | null) => teams.find((t) => t.id === id)?.team_name ?? "a team";
  return (
    <Modal title={`Share “${project.name}”`} onClose={onClose} testId="share-project">
      <form className="share-project" onSubmit={share} aria-label="Share with a team">
        <label>
          Team
          <select aria-label="Team to share with" value={team} onChange={(e) => setTeam(e.target.value)}>
            {teams.map((t) => (
              <option key={t.id} value={t.id}>
                {t.team_name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Role
          <select aria-label="Role" value={level} onChange={(e) => setLevel(e.target.value)}>
            {ROLES.map(([l, role]) => (
              <option key={l} value={l}>
                {role}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy || !team}>
          Share
        </button>
      </form>
      <h3 className="small">Shared with</h3>
      {shares === null ? (
        <p className="muted">Loading…</p>
      ) : shares.length === 0 ? (
        <p className="muted">No team yet.</p>
      ) : (
        <ul className="share-list" aria-label="Teams this project is shared with">
          {shares.map((s) => (
            <li key={s.id}>
              <span>{s.target_name ?? teamName(s.target_id)}</span>
              <span className="badge">{roleOf(s.permission_level)}</span>
              <button type="button" className="btn btn-small" onClick={() => stop(s)} aria-label={`Stop sharing with ${s.target_name ?? teamName(s.target_id)}`}>
                Stop sharing
              </button>
            </li>
          ))}
        </ul>
      )}
    </Modal>
  );
}
