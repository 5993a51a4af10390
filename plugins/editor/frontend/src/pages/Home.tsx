import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, type StarterProject } from "../api/client";
import { ConfirmDialog, Modal, PromptDialog } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { Icon } from "../components/Icon";
import { Link, TopBar } from "../components/TopBar";
import { safeFileName, saveResponse } from "../lib/download";
import { latestOnly } from "../lib/latest";
import type { FlowRecord, Project } from "../lib/types";
import { navigate } from "../router";
import { useSession } from "../session";
import { McpServerTab } from "./McpServer";

type Dialog =
  | { kind: "new-project" }
  | { kind: "rename-project"; project: Project }
  | { kind: "delete-project"; project: Project }
  | { kind: "new-flow" }
  | { kind: "rename-flow"; flow: FlowRecord }
  | { kind: "delete-flow"; flow: FlowRecord }
  | null;

export function HomePage({ projectId }: { projectId?: string }) {
  const session = useSession();
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [flows, setFlows] = useState<FlowRecord[] | null>(null);
  const [search, setSearch] = useState("");
  const [dialog, setDialog] = useState<Dialog>(null);
  const [dragging, setDragging] = useState(false);
  const [view, setView] = useState<"flows" | "mcp">("flows");
  const fileInput = useRef<HTMLInputElement>(null);

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
    void loadFlows();
  }, [loadFlows]);

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
    await loadFlows();
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
          {projects === null && <p className="muted">Loading…</p>}
          <ul>
            {projects?.map((p) => (
              <li key={p.id} className={p.id === current?.id ? "active" : ""}>
                <Link to={`/projects/${p.id}`} aria-current={p.id === current?.id ? "page" : undefined}>
                  {p.name}
                  {p.is_owner === false && (
                    <span className="badge" title="Shared with you">
                      shared
                    </span>
                  )}
                </Link>
                <span className="row-actions">
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
                <li key={f.id} className="flow-card">
                  <Link to={`/flow/${f.id}`} className="flow-open">
                    <strong>{f.name}</strong>
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
      {dialog?.kind === "new-flow" && <NewFlowDialog projectId={current?.id} onClose={() => setDialog(null)} hideStarters={!!session.config.hide_starter_projects} />}
    </div>
  );
}

function NewFlowDialog({ projectId, onClose, hideStarters }: { projectId?: string; onClose: () => void; hideStarters: boolean }) {
  const [starters, setStarters] = useState<StarterProject[] | null>(hideStarters ? [] : null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (hideStarters) return;
    api
      .starterProjects()
      .then(setStarters)
      .catch((e) => {
        notifyError(e, "Could not load the starter projects");
        setStarters([]);
      });
  }, [hideStarters]);

  async function create(name: string, data: StarterProject["data"] | null, description = "") {
    setBusy(true);
    try {
      const flow = await api.createFlow({ name, description, data: data ?? { nodes: [], edges: [], viewport: { x: 0, y: 0, zoom: 1 } }, folder_id: projectId });
      onClose();
      navigate(`/flow/${flow.id}`);
    } catch (e) {
      notifyError(e, "Could not create the flow");
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal title="New flow" onClose={onClose} wide testId="new-flow-dialog">
      <div className="starter-grid">
        <button className="starter-card starter-blank" disabled={busy} onClick={() => create("Untitled flow", null)}>
          <strong>Blank flow</strong>
          <span className="muted">Start from an empty canvas.</span>
        </button>
        {starters === null && <p className="muted">Loading starter projects…</p>}
        {starters?.map((s) => (
          <button key={s.name} className="starter-card" disabled={busy} onClick={() => create(s.name, s.data, s.description ?? "")}>
            <strong>{s.name}</strong>
            <span className="muted">{s.description}</span>
          </button>
        ))}
      </div>
    </Modal>
  );
}
