// The flow's history: versions newest first, the diff of each against the one before, restore, and
// publishing (the version API callers run; the editor always runs the draft). docs/versions.md.
import { useEffect, useMemo, useState } from "react";
import { request } from "../api/client";
import { Modal } from "../components/Modal";
import { notify } from "../components/toast";
import { latestOnly } from "../lib/latest";
import { diffSummary, type FlowVersion, type Publication, type VersionDiff } from "../lib/versions";

export function HistoryDialog(props: {
  flowId: string;
  versionToken: string | null;
  onPublication: (p: Publication) => void;
  onRestored: () => void;
  onClose: () => void;
}) {
  const base = `/api/v1/flows/${props.flowId}`;
  const [entries, setEntries] = useState<FlowVersion[] | null>(null);
  const [publication, setPublication] = useState<Publication | null>(null);
  const [diffs, setDiffs] = useState<Record<string, VersionDiff>>({});
  const [open, setOpen] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const startLoad = useMemo(latestOnly, []);

  const load = async () => {
    const isNewest = startLoad();
    try {
      const [list, pub] = await Promise.all([
        request<{ entries: FlowVersion[] }>(`${base}/versions/`),
        request<Publication>(`${base}/publish`),
      ]);
      if (!isNewest()) return;
      setEntries(list.entries);
      setPublication(pub);
      props.onPublication(pub);
    } catch (e) {
      if (isNewest()) setError((e as Error).message);
    }
  };
  useEffect(() => {
    void load();
  }, [props.flowId]);

  const act = async (fn: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      notify("success", done);
      await load();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const showDiff = async (v: FlowVersion) => {
    setOpen(open === v.id ? null : v.id);
    if (diffs[v.id]) return;
    try {
      const d = await request<VersionDiff>(`${base}/versions/${v.id}/diff`);
      setDiffs((all) => ({ ...all, [v.id]: d }));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const restore = async (v: FlowVersion) => {
    setBusy(true);
    try {
      const headers: Record<string, string> = props.versionToken ? { "If-Match": props.versionToken } : {};
      await request(`${base}/versions/${v.id}/activate`, { method: "POST", headers });
      notify("success", `Restored ${v.version_tag}`);
      props.onRestored();
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };

  const published = publication?.published ? publication.version : null;
  return (
    <Modal title="History" onClose={props.onClose} wide testId="history-dialog">
      <p className="muted">
        Every save is a version. API callers (run, webhook, v2, MCP, A2A, shares) run the published version when there is one; the
        editor and its Playground run the draft.
      </p>
      <p data-testid="publication-state">
        {published ? (
          <>
            <strong>Published: {published.version_tag}</strong>{" "}
            {publication?.published_by_username && (
              <span className="muted" data-testid="published-by">
                by {publication.published_by_username}{" "}
              </span>
            )}
            <button className="btn btn-ghost" disabled={busy} onClick={() => void act(() => request(`${base}/publish`, { method: "DELETE" }), "Unpublished: API callers run the draft")}>
              Unpublish
            </button>
          </>
        ) : (
          <>Not published: API callers run the draft. </>
        )}{" "}
        <button className="btn btn-primary" disabled={busy} data-testid="publish-draft" onClick={() => void act(() => request(`${base}/publish`, { method: "POST", json: {} }), "The draft is published")}>
          Publish the draft
        </button>
      </p>
      {error && <p className="error" role="alert">{error}</p>}
      {entries === null ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <ul className="version-list" data-testid="version-list">
          {entries.map((v) => (
            <li key={v.id} data-testid={`version-${v.version_number}`}>
              <div className="version-row">
                <strong>{v.version_tag}</strong>
                {published?.id === v.id && <span className="badge" data-testid="published-mark">published</span>}
                <span className="muted">{new Date(v.created_at).toLocaleString()}</span>
                {v.username && <span data-testid={`version-author-${v.version_number}`}>by {v.username}</span>}
                <span>{v.description ?? (v.auto ? "autosave" : "")}</span>
                <span className="version-actions">
                  <button className="btn btn-ghost" onClick={() => void showDiff(v)}>
                    {open === v.id ? "Hide changes" : "Changes"}
                  </button>
                  <button className="btn" disabled={busy} onClick={() => void restore(v)}>
                    Restore
                  </button>
                  <button
                    className="btn"
                    disabled={busy || published?.id === v.id}
                    onClick={() => void act(() => request(`${base}/publish`, { method: "POST", json: { version_id: v.id } }), `${v.version_tag} is published`)}
                  >
                    Publish
                  </button>
                </span>
              </div>
              {open === v.id && diffs[v.id] && <DiffView diff={diffs[v.id]} />}
            </li>
          ))}
        </ul>
      )}
    </Modal>
  );
}

function DiffView({ diff }: { diff: VersionDiff }) {
  const label = (n: { id: string; display_name?: string | null }) => n.display_name || n.id;
  return (
    <div className="version-diff" data-testid="version-diff">
      <p>
        {diff.from} → {diff.to}: {diffSummary(diff)}
      </p>
      <ul>
        {diff.added.map((n) => (
          <li key={`a${n.id}`} className="diff-added">+ {label(n)}</li>
        ))}
        {diff.removed.map((n) => (
          <li key={`r${n.id}`} className="diff-removed">− {label(n)}</li>
        ))}
        {diff.changed.map((n) => (
          <li key={`c${n.id}`}>
            ~ {label(n)}: {[...n.fields.map((f) => `${f.field} ${JSON.stringify(f.before)} → ${JSON.stringify(f.after)}`), ...n.members].join("; ")}
          </li>
        ))}
        {diff.moved.map((n) => (
          <li key={`m${n.id}`} className="muted">↔ {label(n)} moved</li>
        ))}
        {diff.edges.added.map((e) => (
          <li key={`ea${e.source}${e.target}`} className="diff-added">+ {e.source} → {e.target}</li>
        ))}
        {diff.edges.removed.map((e) => (
          <li key={`er${e.source}${e.target}`} className="diff-removed">− {e.source} → {e.target}</li>
        ))}
      </ul>
    </div>
  );
}
