import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, type Team } from "../api/client";
import { ConfirmDialog, DialogFooter, Modal, PromptDialog } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { Icon } from "../components/Icon";
import { Link, TopBar } from "../components/TopBar";
import { safeFileName, saveResponse } from "../lib/download";
import { latestOnly } from "../lib/latest";
import type { FlowRecord, Project } from "../lib/types";
import { navigate } from "../router";
import { useSession } from "../session";
import { pagesApi } from "../api/pages";
import { McpServerTab } from "./McpServer";
import { TemplatesDialog } from "./TemplatesDialog";
import { ShareProjectDialog } from "./ShareProjectDialog";

type Dialog =
  | { kind: "new-project" }
  | { kind: "rename-project"; project: Project }
  | { kind: "delete-project"; project: Project }
  | { kind: "share-project"; project: Project }
  | { kind: "new-flow" }
  | { kind: "rename-flow"; flow: FlowRecord }
  | { kind: "delete-flow"; flow: FlowRecord }
  | { kind: "move-flows"; flows: FlowRecord[] }
  | { kind: "delete-flows"; flows: FlowRecord[] }
  | null;

const FLOW_DRAG = "application/x-service-flows";
const TEAM_VIEW = "service.home.team";

/** Whether the caller may share ``p``: their own project, or one shared with them as admin. */
function canShare(p: Project): boolean {
  return p.is_owner !== false || p.shared_role === "admin";
}

export function HomePage({ projectId }: { projectId?: string }) {
  const session = useSession();
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [flows, setFlows] = useState<FlowRecord[] | null>(null);
  const [search, setSearch] = useState("");
  const [dialog, setDialog] = useState<Dialog>(null);
  const [dragging, setDragging] = useState(false);
  const [view, setView] = useState<"flows" | "mcp">("flows");
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dropTarget, setDropTarget] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  // the team switcher: "all" projects, "mine", or a team's id (the projects shared with that team)
  const [teams, setTeams] = useState<Team[]>([]);
  const [teamView, setTeamView] = useState<string>(() => localStorage.getItem(TEAM_VIEW) ?? "all");
  const [projectTeams, setProjectTeams] = useState<Record<string, string[]>>({});

  const loadProjects = useCallback(async () => {
    try {
      const list = await api.listProjects();
      setProjects(list);
      return list;
    } catch (e) {
      notifyError(e, "Could not load your projects");
      setProjects([]);
      return [];
    }
  }, []);

  useEffect(() => {
    void loadProjects();
  }, [loadProjects]);

  useEffect(() => {
    api.listTeams().then(setTeams, () => setTeams([])); // no teams plugin: no switcher
  }, []);

  // which teams each project is shared with: the caller's own shares, and each shared project's shares
  const loadProjectTeams = useCallback(async (list: Project[]) => {
    const found: Record<string, string[]> = {};
    const add = (projectId: string, teamId: string | null) => {
      if (teamId) found[projectId] = [...(found[projectId] ?? []), teamId];
    };
    try {
      for (const s of await api.listShares()) if (s.resource_type === "project" && s.scope === "team") add(s.resource_id, s.target_id);
    } catch {
      return; // the teams plugin is off
    }
    await Promise.all(
      list
        .filter((p) => p.is_owner === false)
        .map((p) =>
          api.resourceShares("project", p.id).then(
            (shares) => shares.forEach((s) => s.scope === "team" && add(p.id, s.target_id)),
            () => undefined,
          ),
        ),
    );
    setProjectTeams(found);
  }, []);

  useEffect(() => {
    if (projects && teams.length) void loadProjectTeams(projects);
  }, [projects, teams, loadProjectTeams]);

  function chooseTeamView(value: string) {
    setTeamView(value);
    localStorage.setItem(TEAM_VIEW, value);
  }

  const shownProjects = useMemo(() => {
    if (!projects) return projects;
    if (teamView === "mine") return projects.filter((p) => p.is_owner !== false);
    if (teamView === "all" || !teams.some((t) => t.id === teamView)) return projects;
    return projects.filter((p) => projectTeams[p.id]?.includes(teamView));
  }, [projects, teamView, teams, projectTeams]);

  const current = useMemo(() => {
    if (!projects?.length) return undefined;
    return (
      projects.find((p) => p.id === projectId) ??
      projects.find((p) => p.name === (session.config.default_folder_name ?? "Starter Project")) ??
      projects[0]
    );
  }, [projects, projectId, session.config.default_folder_name]);

  const startFlowsLoad = useMemo(latestOnly, []);
  const loadFlows = useCallback(async () => {
    if (!current) return;
    const isNewest = startFlowsLoad();
    try {
      const p = await api.readProject(current.id);
      if (isNewest()) setFlows((p.flows ?? []).filter((f) => !f.is_component));
    } catch (e) {
      if (!isNewest()) return;
      notifyError(e, "Could not load the flows");
      setFlows([]);
    }
  }, [current, startFlowsLoad]);

  useEffect(() => {
    setFlows(null);
    setSelected(new Set());
    void loadFlows();
  }, [loadFlows]);

  // An import started before the projects had loaded must reload the list the page shows once it is done,
  // not the no-op its own render's loadFlows was (the page's first load may have run before the upload).
  const latestLoadFlows = useRef(loadFlows);
  useEffect(() => {
    latestLoadFlows.current = loadFlows;
  }, [loadFlows]);

  const chosen = useMemo(() => (flows ?? []).filter((f) => selected.has(f.id)), [flows, selected]);

  /** Move flows to another project (the reference's "Move to" and drag onto a project); ``ids`` of this project's flows. */
  async function moveFlows(ids: string[], target: Project) {
    let moved = 0;
    for (const id of ids) {
      try {
        await pagesApi.moveFlow(id, target.id);
        moved += 1;
      } catch (e) {
        notifyError(e, "Could not move a flow");
      }
    }
    if (moved) notify("success", `Moved ${moved} flow${moved > 1 ? "s" : ""} to “${target.name}”.`);
    setSelected(new Set());
    await loadFlows();
  }

  const visible = useMemo(() => {
    const q = search.trim().toLowerCase();
    const list = [...(flows ?? [])].sort((a, b) => String(b.updated_at ?? "").localeCompare(String(a.updated_at ?? "")));
    if (!q) return list;
    return list.filter((f) => f.name.toLowerCase().includes(q) || (f.description ?? "").toLowerCase().includes(q));
  }, [flows, search]);

  async function importFiles(files: FileList | File[]) {
    let count = 0;
    for (const file of Array.from(files)) {
      if (!/\.(json|zip)$/i.test(file.name)) {
        notify("error", `${file.name}: only .json and .zip files can be imported.`);
        continue;
      }
      try {
        const created = await api.uploadFlows(file, current?.id);
        count += created.length;
      } catch (e) {
        notifyError(e, `Import of ${file.name} failed`);
      }
    }
    if (count) notify("success", `Imported ${count} flow${count > 1 ? "s" : ""}.`);
    await latestLoadFlows.current();
  }

  async function exportFlows(list: FlowRecord[], name: string) {
    if (!list.length) return notify("info", "There is nothing to export.");
    try {
      const res = await api.downloadFlows(list.map((f) => f.id));
      await saveResponse(res, `${safeFileName(name)}.json`);
    } catch (e) {
      notifyError(e, "Export failed");
    }
  }

  async function duplicate(flow: FlowRecord) {
    try {
      const full = await api.readFlow(flow.id);
      const copy = await api.createFlow({
        name: `${full.name} (copy)`,
        description: full.description ?? "",
        data: full.data ?? { nodes: [], edges: [] },
        folder_id: full.folder_id ?? current?.id,
      });
      notify("success", `Created “${copy.name}”.`);
      await loadFlows();
    } catch (e) {
      notifyError(e, "Duplicate failed");
    }
  }

  return (
    <div className="app-shell">
      <TopBar />
      <div className="home">
        <nav className="projects" aria-label="Projects">
          <div className="panel-title">
            <h2>Projects</h2>
            {!session.config.hide_new_project_button && (
              <button className="icon-btn" aria-label="New project" title="New project" onClick={() => setDialog({ kind: "new-project" })}>
                <Icon name="plus" />
              </button>
            )}
          </div>
          {teams.length > 0 && (
            <label className="team-switcher">
              <span>Showing</span>
              <select aria-label="Team" value={teams.some((t) => t.id === teamView) || teamView === "mine" ? teamView : "all"} onChange={(e) => chooseTeamView(e.target.value)}>
                <option value="all">All projects</option>
                <option value="mine">Mine</option>
                {teams.map((t) => (
                  <option key={t.id} value={t.id}>
                    Team: {t.team_name}
                  </option>
                ))}
              </select>
            </label>
          )}
          {projects === null && <p className="muted">Loading…</p>}
          {shownProjects?.length === 0 && projects?.length !== 0 && <p className="muted small">No project here.</p>}
          <ul>
            {shownProjects?.map((p) => (
              <li key={p.id} className={p.id === current?.id ? "active" : ""}>
                <Link
                  to={`/projects/${p.id}`}
                  aria-current={p.id === current?.id ? "page" : undefined}
                  className={dropTarget === p.id ? "drop-target" : undefined}
                  onDragOver={(e: React.DragEvent) => {
                    if (p.id === current?.id || !e.dataTransfer.types.includes(FLOW_DRAG)) return;
                    e.preventDefault();
                    setDropTarget(p.id);
                  }}
                  onDragLeave={() => setDropTarget(null)}
                  onDrop={(e: React.DragEvent) => {
                    const ids = e.dataTransfer.getData(FLOW_DRAG);
                    setDropTarget(null);
                    if (!ids || p.id === current?.id) return;
                    e.preventDefault();
                    void moveFlows(JSON.parse(ids) as string[], p);
                  }}
                >
                  {p.name}
                  {p.is_owner === false && (
                    <span className="badge" title={`Shared with you${p.shared_role ? ` as ${String(p.shared_role)}` : ""}`}>
                      {p.shared_role ? `shared · ${String(p.shared_role)}` : "shared"}
                    </span>
                  )}
                </Link>
                <span className="row-actions">
                  {teams.length > 0 && canShare(p) && (
                    <button className="icon-btn" aria-label={`Share project ${p.name}`} title="Share with a team" onClick={() => setDialog({ kind: "share-project", project: p })}>
                      <Icon name="branch" />
                    </button>
                  )}
                  <button className="icon-btn" aria-label={`Rename project ${p.name}`} title="Rename" onClick={() => setDialog({ kind: "rename-project", project: p })}>
                    <Icon name="pencil" />
                  </button>
                  <button className="icon-btn" aria-label={`Delete project ${p.name}`} title="Delete" onClick={() => setDialog({ kind: "delete-project", project: p })}>
                    <Icon name="trash" />
                  </button>
                </span>
              </li>
            ))}
          </ul>
        </nav>

        <main
          className={`flows${dragging ? " drop-active" : ""}`}
          onDragOver={(e) => {
            if (e.dataTransfer.types.includes("Files")) {
              e.preventDefault();
              setDragging(true);
            }
          }}
          onDragLeave={(e) => e.currentTarget === e.target && setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            if (e.dataTransfer.files.length) void importFiles(e.dataTransfer.files);
          }}
        >
          <div className="flows-header">
            <h1>{current?.name ?? "Flows"}</h1>
            {current && (
              <div className="segmented" role="tablist" aria-label="Project view">
                <button type="button" role="tab" aria-selected={view === "flows"} className={view === "flows" ? "active" : ""} onClick={() => setView("flows")}>
                  Flows
                </button>
                <button type="button" role="tab" aria-selected={view === "mcp"} className={view === "mcp" ? "active" : ""} onClick={() => setView("mcp")}>
                  MCP Server
                </button>
              </div>
            )}
            <div className="flows-actions">
              <input
                type="search"
                className="search"
                placeholder="Search flows"
                aria-label="Search flows"
                value={search}
                onChange={(e) => setSearch(e.target.value)}
              />
              <button className="btn" onClick={() => fileInput.current?.click()}>
                Import
              </button>
              <input
                ref={fileInput}
                type="file"
                accept=".json,.zip,application/json,application/zip"
                multiple
                hidden
                data-testid="import-input"
                onChange={(e) => {
                  if (e.target.files?.length) void importFiles(e.target.files);
                  e.target.value = "";
                }}
              />
              <button className="btn" onClick={() => exportFlows(flows ?? [], current?.name ?? "flows")} disabled={!flows?.length}>
                Export all
              </button>
              {!session.config.hide_new_flow_button && (
                <button className="btn btn-primary" onClick={() => setDialog({ kind: "new-flow" })}>
                  New flow
                </button>
              )}
            </div>
          </div>
          <p className="muted drop-hint">Drop .json or .zip files here to import them.</p>
          {view === "flows" && chosen.length > 0 && (
            <div className="bulk-bar" role="toolbar" aria-label="Selected flows">
              <strong data-testid="selected-count">{chosen.length} selected</strong>
              <button className="btn btn-small" onClick={() => setSelected(new Set(visible.map((f) => f.id)))}>
                Select all
              </button>
              <button className="btn btn-small" onClick={() => setSelected(new Set())}>
                Clear
              </button>
              <span className="spacer" />
              <button className="btn btn-small" disabled={(projects?.length ?? 0) < 2} onClick={() => setDialog({ kind: "move-flows", flows: chosen })}>
                Move to…
              </button>
              <button className="btn btn-small" onClick={() => exportFlows(chosen, `${current?.name ?? "flows"}-selected`)}>
                Export selected
              </button>
              <button className="btn btn-small btn-danger" onClick={() => setDialog({ kind: "delete-flows", flows: chosen })}>
                Delete selected
              </button>
            </div>
          )}
          {view === "mcp" && current ? (
            <McpServerTab key={current.id} project={current} />
          ) : flows === null ? (
            <p className="muted">Loading…</p>
          ) : visible.length === 0 ? (
            <div className="empty">
              {search ? <p>No flow matches “{search}”.</p> : <p>No flows yet. Create one, or import a .json / .zip export.</p>}
            </div>
          ) : (
            <ul className="flow-list" aria-label="Flows">
              {visible.map((f) => (
                <li
                  key={f.id}
                  className={`flow-card${selected.has(f.id) ? " selected" : ""}`}
                  draggable
                  onDragStart={(e) => {
                    const ids = selected.has(f.id) ? [...selected] : [f.id];
                    e.dataTransfer.setData(FLOW_DRAG, JSON.stringify(ids));
                    e.dataTransfer.effectAllowed = "move";
                  }}
                >
                  <input
                    type="checkbox"
                    className="flow-select"
                    aria-label={`Select ${f.name}`}
                    checked={selected.has(f.id)}
                    onChange={(e) =>
                      setSelected((s) => {
                        const next = new Set(s);
                        if (e.target.checked) next.add(f.id);
                        else next.delete(f.id);
                        return next;
                      })
                    }
                  />
                  <Link to={`/flow/${f.id}`} className="flow-open">
                    <strong>{f.name}</strong>
                    {f.shared_role || (current?.is_owner === false && current.shared_role) ? (
                      <span className="badge" title={`Your role on this shared flow: ${String(f.shared_role ?? current?.shared_role)}`}>
                        {String(f.shared_role ?? current?.shared_role)}
                      </span>
                    ) : null}
                    <span className="muted">{f.description || `${f.data?.nodes?.length ?? 0} components`}</span>
                  </Link>
                  <span className="muted small">{f.updated_at ? new Date(f.updated_at).toLocaleString() : ""}</span>
                  <span className="row-actions">
                    <button className="btn btn-small" onClick={() => setDialog({ kind: "rename-flow", flow: f })} aria-label={`Rename ${f.name}`}>
                      Rename
                    </button>
                    <button className="btn btn-small" onClick={() => duplicate(f)} aria-label={`Duplicate ${f.name}`}>
                      Duplicate
                    </button>
                    {(projects?.length ?? 0) > 1 && (
                      <button className="btn btn-small" onClick={() => setDialog({ kind: "move-flows", flows: [f] })} aria-label={`Move ${f.name}`}>
                        Move
                      </button>
                    )}
                    <button className="btn btn-small" onClick={() => exportFlows([f], f.name)} aria-label={`Export ${f.name}`}>
                      Export
                    </button>
                    <button className="btn btn-small btn-danger-text" onClick={() => setDialog({ kind: "delete-flow", flow: f })} aria-label={`Delete ${f.name}`}>
                      Delete
                    </button>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </main>
      </div>

      {dialog?.kind === "new-project" && (
        <PromptDialog
          title="New project"
          label="Name"
          submitLabel="Create"
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            try {
              const p = await api.createProject(name);
              setDialog(null);
              await loadProjects();
              navigate(`/projects/${p.id}`);
            } catch (e) {
              notifyError(e, "Could not create the project");
            }
          }}
        />
      )}
      {dialog?.kind === "rename-project" && (
        <PromptDialog
          title="Rename project"
          label="Name"
          initial={dialog.project.name}
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            try {
              await api.renameProject(dialog.project.id, name);
              setDialog(null);
              await loadProjects();
            } catch (e) {
              notifyError(e, "Could not rename the project");
            }
          }}
        />
      )}
      {dialog?.kind === "share-project" && (
        <ShareProjectDialog
          project={dialog.project}
          teams={teams}
          onClose={() => setDialog(null)}
          onChanged={() => projects && void loadProjectTeams(projects)}
        />
      )}
      {dialog?.kind === "delete-project" && (
        <ConfirmDialog
          title="Delete project"
          text={`Delete “${dialog.project.name}” and every flow in it? This cannot be undone.`}
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            try {
              await api.deleteProject(dialog.project.id);
              setDialog(null);
              notify("success", "Project deleted.");
              await loadProjects();
              if (dialog.project.id === current?.id) navigate("/");
            } catch (e) {
              notifyError(e, "Could not delete the project");
            }
          }}
        />
      )}
      {dialog?.kind === "rename-flow" && (
        <PromptDialog
          title="Rename flow"
          label="Name"
          initial={dialog.flow.name}
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            try {
              await api.updateFlow(dialog.flow.id, { name });
              setDialog(null);
              await loadFlows();
            } catch (e) {
              notifyError(e, "Could not rename the flow");
            }
          }}
        />
      )}
      {dialog?.kind === "delete-flow" && (
        <ConfirmDialog
          title="Delete flow"
          text={`Delete “${dialog.flow.name}”? This cannot be undone.`}
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            try {
              await api.deleteFlow(dialog.flow.id);
              setDialog(null);
              notify("success", "Flow deleted.");
              await loadFlows();
            } catch (e) {
              notifyError(e, "Could not delete the flow");
            }
          }}
        />
      )}
      {dialog?.kind === "move-flows" && (
        <MoveDialog
          flows={dialog.flows}
          projects={(projects ?? []).filter((p) => p.id !== current?.id)}
          onClose={() => setDialog(null)}
          onMove={async (target) => {
            // the dialog stays (busy) until the flows are moved: the target project's page then lists them
            await moveFlows(
              dialog.flows.map((f) => f.id),
              target,
            );
            setDialog(null);
          }}
        />
      )}
      {dialog?.kind === "delete-flows" && (
        <ConfirmDialog
          title="Delete flows"
          text={`Delete ${dialog.flows.length} flow${dialog.flows.length > 1 ? "s" : ""} (${dialog.flows.map((f) => `“${f.name}”`).join(", ")})? This cannot be undone.`}
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            try {
              const { deleted } = await pagesApi.deleteFlows(dialog.flows.map((f) => f.id));
              setDialog(null);
              notify("success", `Deleted ${deleted} flow${deleted === 1 ? "" : "s"}.`);
              setSelected(new Set());
              await loadFlows();
            } catch (e) {
              notifyError(e, "Could not delete the flows");
            }
          }}
        />
      )}
      {dialog?.kind === "new-flow" && <TemplatesDialog projectId={current?.id} onClose={() => setDialog(null)} hideStarters={!!session.config.hide_starter_projects} />}
    </div>
  );
}

function MoveDialog({ flows, projects, onClose, onMove }: { flows: FlowRecord[]; projects: Project[]; onClose: () => void; onMove: (p: Project) => Promise<void> }) {
  const [target, setTarget] = useState(projects[0]?.id ?? "");
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={flows.length === 1 ? `Move “${flows[0].name}”` : `Move ${flows.length} flows`} onClose={onClose} testId="move-dialog">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const p = projects.find((x) => x.id === target);
          if (!p || busy) return;
          setBusy(true);
          void onMove(p).finally(() => setBusy(false));
        }}
      >
        <label className="field">
          <span>To the project</span>
          <select value={target} onChange={(e) => setTarget(e.target.value)} autoFocus>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <DialogFooter onClose={onClose} submit={busy ? "Moving…" : "Move"} busy={busy} disabled={!target} />
      </form>
    </Modal>
  );
}
