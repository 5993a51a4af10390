import { memo, useMemo, useState } from "react";
import { Icon } from "../components/Icon";
import { categoryIcon } from "../lib/categories";
import type { Catalog, FrontendNode } from "../lib/types";

export const DRAG_MIME = "application/x-service-component";

const CATEGORY_NAMES: Record<string, string> = {
  input_output: "Input & Output",
  data_source: "Data sources",
  processing: "Processing",
  flow_controls: "Flow control",
  models_and_agents: "Models & agents",
  llm_operations: "LLM operations",
  utilities: "Utilities",
  files_and_knowledge: "Files & knowledge",
  embeddings: "Embeddings",
  tools: "Tools",
  agents: "Agents",
};

/** On a phone the list opens under the search box while focus is in it (phone.css): adding a component or a
 * note folds it again, so the new node is in sight. */
function foldOnPhone(el: HTMLElement) {
  if (window.matchMedia("(max-width: 640px)").matches) el.blur();
}

export function categoryLabel(c: string): string {
  return CATEGORY_NAMES[c] ?? c.replace(/_/g, " ").replace(/\b\w/g, (m) => m.toUpperCase());
}

export function catalogCategories(catalog: Catalog | null): [string, [string, FrontendNode][]][] {
  if (!catalog) return [];
  const out: [string, [string, FrontendNode][]][] = [];
  for (const [cat, items] of Object.entries(catalog)) {
    if (!items || typeof items !== "object" || Array.isArray(items) || cat === "component_display_names") continue;
    const entries = Object.entries(items).filter(([, n]) => n && typeof n === "object" && "template" in n);
    if (entries.length) out.push([cat, entries]);
  }
  const order = Object.keys(CATEGORY_NAMES);
  out.sort((a, b) => (order.indexOf(a[0]) + 1 || 99) - (order.indexOf(b[0]) + 1 || 99) || a[0].localeCompare(b[0]));
  return out;
}

export const ComponentSidebar = memo(function ComponentSidebar(props: {
  catalog: Catalog | null;
  error: string | null;
  onAdd: (key: string, node: FrontendNode) => void;
  onAddNote: () => void;
}) {
  const [q, setQ] = useState("");
  const cats = useMemo(() => catalogCategories(props.catalog), [props.catalog]);
  const query = q.trim().toLowerCase();
  return (
    <aside className="sidebar" aria-label="Components">
      <div className="sidebar-search">
        <input type="search" placeholder="Search components" aria-label="Search components" value={q} onChange={(e) => setQ(e.target.value)} />
      </div>
      {props.error && (
        <p className="form-error" role="alert">
          {props.error}
        </p>
      )}
      {!props.catalog && !props.error && <p className="muted pad">Loading components…</p>}
      <div className="sidebar-list">
        {cats.map(([cat, entries]) => {
          const shown = entries.filter(
            ([key, n]) => !query || key.toLowerCase().includes(query) || (n.display_name ?? "").toLowerCase().includes(query) || (n.description ?? "").toLowerCase().includes(query),
          );
          if (!shown.length) return null;
          const byName = (a: [string, FrontendNode], b: [string, FrontendNode]) => (a[1].display_name ?? a[0]).localeCompare(b[1].display_name ?? b[0]);
          const item = ([key, n]: [string, FrontendNode]) => (
            <li key={key}>
              <button
                type="button"
                className="component-item"
                draggable
                data-testid={`component-${key}`}
                title={`${n.description ?? ""}\nDrag onto the canvas, or press Enter to add.`}
                onDragStart={(e) => {
                  e.dataTransfer.setData(DRAG_MIME, key);
                  e.dataTransfer.effectAllowed = "move";
                }}
                onClick={(e) => {
                  props.onAdd(key, n);
                  foldOnPhone(e.currentTarget);
                }}
              >
                <span className="ci-name">{n.display_name || key}</span>
                {n.legacy ? <span className="tag">legacy</span> : null}
              </button>
            </li>
          );
          const current = shown.filter(([, n]) => !n.legacy).sort(byName);
          const legacy = shown.filter(([, n]) => n.legacy).sort(byName);
          return (
            <details key={cat} open>
              <summary>
                <span className="cat-icon" data-category={cat} aria-hidden>
                  <Icon name={categoryIcon(cat)} size={12} />
                </span>{" "}
                {categoryLabel(cat)}
              </summary>
              <ul>{(query ? [...current, ...legacy] : current).map(item)}</ul>
              {!query && legacy.length > 0 && (
                <details className="legacy-group" data-testid={`legacy-${cat}`}>
                  <summary>Legacy ({legacy.length})</summary>
                  <ul>{legacy.map(item)}</ul>
                </details>
              )}
            </details>
          );
        })}
        <div className="pad">
          <button
            type="button"
            className="btn btn-small"
            onClick={(e) => {
              props.onAddNote();
              foldOnPhone(e.currentTarget);
            }}
          >
            + Add note
          </button>
        </div>
      </div>
    </aside>
  );
});
