// Teams: the caller's teams and their members; superusers create teams and manage members; owners share
// their projects with a team at a role (viewer, run-only, developer, admin). The teams plugin's API.
import { useCallback, useEffect, useState } from "react";
import { api, type Share, type Team, type TeamMember, type User } from "../api/client";
import { TopBar } from "../components/TopBar";
import { notify, notifyError } from "../components/toast";
import type { Project } from "../lib/types";
import { useSession } from "../session";

export const ROLES: { level: string; role: string }[] = [
  { level: "read", role: "viewer" },
  { level: "execute", role: "run-only" },
  { level: "write", role: "developer" },
  { level: "admin", role: "admin" },
];

export function roleOf(level: string): string {
  return ROLES.find((r) => r.level === level)?.role ?? level;
}

function Members({ team, users, admin }: { team: Team; users: User[]; admin: boolean }) {
  const [members, setMembers] = useState<TeamMember[] | null>(null);
  const [adding, setAdding] = useState("");
  const load = useCallback(() => {
    api.listMembers(team.id).then(setMembers, (e) => notifyError(e, "Could not load the members"));
  }, [team.id]);
  useEffect(load, [load]);
  const name = (id: string) => users.find((u) => u.id.replace(/-/g, "") === id.replace(/-/g, ""))?.username ?? id;
  return (
    <section className="team-card" aria-label={`Team ${team.team_name}`}>
      <h3>
        {team.team_name} <span className="muted">({team.adom_name})</span>
      </h3>
      <ul>
        {members?.map((m) => (
          <li key={m.id}>
            <span>{name(m.user_id)}</span> <span className="badge">{m.source}</span>
            {admin && (
              <button
                className="btn btn-ghost"
                aria-label={`Remove ${name(m.user_id)} from ${team.team_name}`}
                onClick={() => api.removeMember(team.id, m.user_id).then(load, (e) => notifyError(e, "Could not remove"))}
              >
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
      {admin && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (!adding) return;
            api.addMember(team.id, adding).then(() => (setAdding(""), load()), (err) => notifyError(err, "Could not add"));
          }}
        >
          <select aria-label={`Add a member to ${team.team_name}`} value={adding} onChange={(e) => setAdding(e.target.value)}>
            <option value="">Add a member…</option>
            {users.map((u) => (
              <option key={u.id} value={u.id}>
                {u.username}
              </option>
            ))}
          </select>
          <button className="btn" type="submit">
            Add
          </button>
        </form>
      )}
    </section>
  );
}

function ShareProject({ teams, onShared }: { teams: Team[]; onShared: () => void }) {
  const [projects, setProjects] = useState<Project[]>([]);
  const [project, setProject] = useState("");
  const [team, setTeam] = useState("");
  const [level, setLevel] = useState("read");
  useEffect(() => {
    api.listProjects().then((all) => setProjects(all.filter((p) => p.is_owner !== false)), () => undefined);
  }, []);
  return (
    <form
      className="row"
      aria-label="Share a project"
      onSubmit={(e) => {
        e.preventDefault();
        if (!project || !team) return;
        api.shareProject(project, team, level).then(
          () => (notify("success", "Project shared"), onShared()),
          (err) => notifyError(err, "Could not share the project"),
        );
      }}
    >
      <select aria-label="Project to share" value={project} onChange={(e) => setProject(e.target.value)}>
        <option value="">Project…</option>
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
      <select aria-label="Team to share with" value={team} onChange={(e) => setTeam(e.target.value)}>
        <option value="">Team…</option>
        {teams.map((t) => (
          <option key={t.id} value={t.id}>
            {t.team_name}
          </option>
        ))}
      </select>
      <select aria-label="Role" value={level} onChange={(e) => setLevel(e.target.value)}>
        {ROLES.map((r) => (
          <option key={r.level} value={r.level}>
            {r.role}
          </option>
        ))}
      </select>
      <button className="btn btn-primary" type="submit">
        Share
      </button>
    </form>
  );
}

export function TeamsPage() {
  const session = useSession();
  const admin = Boolean(session.user?.is_superuser);
  const [teams, setTeams] = useState<Team[] | null>(null);
  const [users, setUsers] = useState<User[]>([]);
  const [shares, setShares] = useState<Share[]>([]);
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const load = useCallback(() => {
    api.listTeams().then(setTeams, (e) => notifyError(e, "Could not load the teams"));
    api.listShares().then(setShares, () => setShares([]));
    if (admin) api.listUsers().then((r) => setUsers(r.users), () => undefined);
  }, [admin]);
  useEffect(load, [load]);
  return (
    <div className="app-shell">
      <TopBar />
      <main className="page teams-page">
        <h1>Teams</h1>
        {teams !== null && teams.length === 0 && <p className="muted">You are in no team yet.</p>}
        {teams?.map((t) => <Members key={t.id} team={t} users={users} admin={admin} />)}
        {admin && (
          <form
            className="row"
            aria-label="New team"
            onSubmit={(e) => {
              e.preventDefault();
              api.createTeam(name.trim(), (slug || name).trim()).then(
                () => (setName(""), setSlug(""), load()),
                (err) => notifyError(err, "Could not create the team"),
              );
            }}
          >
            <input aria-label="Team name" placeholder="Team name" value={name} onChange={(e) => setName(e.target.value)} required />
            <input aria-label="Group (adom_name)" placeholder="SSO group (optional)" value={slug} onChange={(e) => setSlug(e.target.value)} />
            <button className="btn" type="submit">
              Create team
            </button>
          </form>
        )}
        <h2>Sharing</h2>
        {teams && teams.length > 0 && <ShareProject teams={teams} onShared={load} />}
        <ul aria-label="Your shares">
          {shares.map((s) => (
            <li key={s.id}>
              {s.resource_type} {s.resource_id.slice(0, 8)} → {s.target_name ?? s.target_id}{" "}
              <span className="badge">{roleOf(s.permission_level)}</span>
              <button className="btn btn-ghost" onClick={() => api.deleteShare(s.id).then(load, (e) => notifyError(e, "Could not remove"))}>
                Stop sharing
              </button>
            </li>
          ))}
        </ul>
      </main>
    </div>
  );
}
