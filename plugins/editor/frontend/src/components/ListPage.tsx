import type { ReactNode } from "react";
import { Link } from "./TopBar";

/** A page section's heading with its action button(s) beside it. */
export function SectionHead({ id, title, className = "section-head", children }: { id?: string; title: string; className?: string; children?: ReactNode }) {
  return (
    <div className={className}>
      <h1 id={id}>{title}</h1>
      {children}
    </div>
  );
}

/** A list's three states: loading (null), empty (the message), or its table. */
export function ListState<T>({ items, empty, emptyClass = "empty", children }: { items: T[] | null; empty: string; emptyClass?: string; children: (items: T[]) => ReactNode }) {
  if (items === null) return <p className="muted">Loading…</p>;
  if (items.length === 0) return <p className={emptyClass}>{empty}</p>;
  return <>{children(items)}</>;
}

/** A table's head: one column a title, and a last, untitled one for the row's actions. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c}>{c}</th>
        ))}
        <th />
      </tr>
    </thead>
  );
}

/** Edit / Delete buttons of a table row, named after the row for screen readers. */
export function RowButton({ label, name, danger = false, onClick }: { label: string; name: string; danger?: boolean; onClick: () => void }) {
  return (
    <button className={danger ? "btn btn-small btn-danger-text" : "btn btn-small"} onClick={onClick} aria-label={`${label} ${name}`}>
      {label}
    </button>
  );
}

/** The side navigation of a tabbed page (Settings, Governance) and the current tab's content. */
export function TabbedPage({ label, base, tabs, tab, children }: { label: string; base: string; tabs: { id: string; label: string }[]; tab: string; children: ReactNode }) {
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label={label}>
        <h2>{label}</h2>
        <ul>
          {tabs.map((t) => (
            <li key={t.id} className={t.id === tab ? "active" : ""}>
              <Link to={`${base}/${t.id}`} aria-current={t.id === tab ? "page" : undefined}>
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main className="settings-main">{children}</main>
    </div>
  );
}
