// A save refused with 409: someone saved the flow after it was loaded here. Show what each side changed
// since the graph both started from (node by node, field by field, edge by edge: lib/merge.ts), let the user
// pick mine or theirs per change and save the merged flow over the version just reviewed; or load theirs,
// overwrite with this canvas, or save this canvas as a copy. Nothing is lost: every save is a version.
import { useMemo, useState } from "react";
import { request } from "../api/client";
import { Modal } from "../components/Modal";
import { applyMerge, describeChange, mergeChanges, type MergeChange, type Side } from "../lib/merge";
import type { ConflictDetail } from "../lib/versions";
import type { FlowData, FlowRecord } from "../lib/types";

function shown(change: MergeChange, value: string) {
  if (change.kind === "edge" || change.kind === "node") return value === "absent" ? "—" : "✓";
  return value === "" || value === '""' ? <span className="muted">(empty)</span> : value;
}

export function ConflictDialog(props: {
  flowId: string;
  conflict: ConflictDetail;
  /** the graph this editor loaded or last saved: what both sides started from */
  base: FlowData | null;
  onOverwritten: (flow: FlowRecord) => void;
  /** a merged graph was saved: the canvas must show it */
  onMerged: (flow: FlowRecord) => void;
  onReload: () => void;
  /** this canvas was saved as a copy: open it (this flow keeps what the server holds) */
  onForked: (copyId: string) => void;
  onClose: () => void;
}) {
  const { conflict } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [picks, setPicks] = useState<Record<string, Side>>({});
  const who = conflict.modified_by.username ?? "Someone";
  const when = conflict.modified_at ? new Date(conflict.modified_at).toLocaleString() : "";
  const theirs = conflict.current.data ?? { nodes: [], edges: [] };
  const changes = useMemo(() => mergeChanges(props.base, conflict.submitted, theirs), [props.base, conflict.submitted, theirs]);

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  const write = async (data: FlowData) => {
    const headers: Record<string, string> = conflict.current_version_token ? { "If-Match": conflict.current_version_token } : {};
    return request<FlowRecord>(`/api/v1/flows/${props.flowId}/overwrite`, { method: "POST", json: { data }, headers });
  };
  const overwrite = () => run(async () => props.onOverwritten(await write(conflict.submitted)));
  const merge = () => run(async () => props.onMerged(await write(applyMerge(conflict.submitted, theirs, changes, picks))));
  const fork = () =>
    run(async () => {
      const copy = await request<FlowRecord>(`/api/v1/flows/${props.flowId}/fork`, { method: "POST", json: { data: conflict.submitted } });
      props.onForked(copy.id);
    });

  const side = (key: string, fallback: Side) => picks[key] ?? fallback;
  return (
    <Modal title="This flow was changed by someone else" onClose={props.onClose} testId="conflict-dialog" wide>
      <p>
        {who} saved this flow{when ? ` at ${when}` : ""} after you opened it. Your changes were not saved over theirs.
      </p>
      {changes.length === 0 ? (
        <p data-testid="conflict-summary">Both versions hold the same components, settings and connections.</p>
      ) : (
        <table className="merge-table" data-testid="conflict-summary">
          <caption>Pick which side to keep for each change, then save the merged flow.</caption>
          <thead>
            <tr>
              <th scope="col">Change</th>
              <th scope="col">Yours</th>
              <th scope="col">Theirs</th>
              <th scope="col">Keep</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <tr key={c.key} data-testid={`merge-${c.key}`} className={c.by === "both" ? "merge-both" : undefined}>
                <td>{describeChange(c)}</td>
                <td>{shown(c, c.mine)}</td>
                <td>{shown(c, c.theirs)}</td>
                <td>
                  <fieldset className="merge-pick">
                    <legend className="sr-only">Keep for {describeChange(c)}</legend>
                    {(["mine", "theirs"] as const).map((s) => (
                      <label key={s}>
                        <input
                          type="radio"
                          name={`pick-${c.key}`}
                          value={s}
                          checked={side(c.key, c.pick) === s}
                          onChange={() => setPicks((p) => ({ ...p, [c.key]: s }))}
                          data-testid={`pick-${s}-${c.key}`}
                        />
                        {s === "mine" ? "Mine" : "Theirs"}
                      </label>
                    ))}
                  </fieldset>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {error && <p className="error" role="alert">{error}</p>}
      <div className="modal-actions">
        <button className="btn" disabled={busy} onClick={props.onReload} data-testid="conflict-reload">
          Load their version
        </button>
        <button className="btn" disabled={busy} onClick={() => void fork()} data-testid="conflict-fork">
          Save mine as a copy
        </button>
        <button className="btn btn-danger" disabled={busy} onClick={() => void overwrite()} data-testid="conflict-overwrite">
          Overwrite with mine
        </button>
        <button className="btn btn-primary" disabled={busy} onClick={() => void merge()} data-testid="conflict-merge">
          Save merged
        </button>
      </div>
    </Modal>
  );
}
