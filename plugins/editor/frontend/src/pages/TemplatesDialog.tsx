// "New flow": the reference's template gallery (categories on the left, search, a card per example flow,
// and a blank flow), over the example flows this service ships (GET /api/v1/flows/basic_examples/).
import { useEffect, useMemo, useState } from "react";
import { api } from "../api/client";
import { pagesApi, type ExampleFlow } from "../api/pages";
import { Modal } from "../components/Modal";
import { notifyError } from "../components/toast";
import { navigate } from "../router";

/** Category labels for the example flows' tags; a tag not listed here is shown capitalised. */
const LABELS: Record<string, string> = {
  "getting-started": "Get started",
  agents: "Agents",
  chatbots: "Chatbots",
  automation: "Automation",
  data: "Data",
  documents: "Documents",
  "q-a": "Q&A",
  memory: "Memory",
  mcp: "MCP",
};

export function categoryLabel(tag: string): string {
  return LABELS[tag] ?? tag.replace(/[-_]+/g, " ").replace(/^./, (c) => c.toUpperCase());
}

const ALL = "all";

export function TemplatesDialog({ projectId, onClose, hideStarters }: { projectId?: string; onClose: () => void; hideStarters: boolean }) {
  const [examples, setExamples] = useState<ExampleFlow[] | null>(hideStarters ? [] : null);
  const [busy, setBusy] = useState(false);
  const [category, setCategory] = useState<string>(ALL);
  const [search, setSearch] = useState("");

  useEffect(() => {
    if (hideStarters) return;
    pagesApi
      .examples()
      .then(setExamples)
      .catch((e) => {
        notifyError(e, "Could not load the templates");
        setExamples([]);
      });
  }, [hideStarters]);

  const categories = useMemo(() => {
    const tags = new Set<string>();
    for (const e of examples ?? []) for (const t of e.tags ?? []) tags.add(t);
    const list = [...tags].sort((a, b) => (a === "getting-started" ? -1 : b === "getting-started" ? 1 : categoryLabel(a).localeCompare(categoryLabel(b))));
    return list;
  }, [examples]);

  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    return (examples ?? []).filter(
      (e) =>
        (category === ALL || (e.tags ?? []).includes(category)) &&
        (!q || e.name.toLowerCase().includes(q) || (e.description ?? "").toLowerCase().includes(q) || (e.tags ?? []).some((t) => categoryLabel(t).toLowerCase().includes(q))),
    );
  }, [examples, category, search]);

  async function create(name: string, data: ExampleFlow["data"] | null, description = "") {
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

  const pick = (c: string) => (
    <li key={c}>
      <button type="button" className={`tpl-cat${category === c ? " active" : ""}`} aria-pressed={category === c} onClick={() => setCategory(c)}>
        {c === ALL ? "All templates" : categoryLabel(c)}
      </button>
    </li>
  );

  return (
    <Modal title="New flow" onClose={onClose} wide testId="new-flow-dialog">
      <div className="tpl">
        {!hideStarters && (
          <nav className="tpl-nav" aria-label="Template categories">
            <ul>
              {pick(ALL)}
              {categories.map(pick)}
            </ul>
          </nav>
        )}
        <div className="tpl-main">
          {!hideStarters && (
            <input type="search" className="search" placeholder="Search templates" aria-label="Search templates" value={search} onChange={(e) => setSearch(e.target.value)} />
          )}
          <div className="starter-grid" data-testid="template-grid">
            <button className="starter-card starter-blank" disabled={busy} onClick={() => create("Untitled flow", null)}>
              <strong>Blank flow</strong>
              <span className="muted">Start from an empty canvas.</span>
            </button>
            {examples === null && <p className="muted">Loading templates…</p>}
            {shown.map((s) => (
              <button key={s.id ?? s.name} className="starter-card" data-testid="template-card" disabled={busy} onClick={() => create(s.name, s.data, s.description ?? "")}>
                <strong>{s.name}</strong>
                <span className="muted">{s.description}</span>
                {!!s.tags?.length && <span className="tpl-tags">{s.tags.map(categoryLabel).join(" · ")}</span>}
              </button>
            ))}
            {examples !== null && !hideStarters && shown.length === 0 && <p className="muted">No template matches “{search}”.</p>}
          </div>
        </div>
      </div>
    </Modal>
  );
}
