// A save refused with 409: someone saved the flow after it was loaded here. Show what differs and let
// the user keep theirs (reload), overwrite with this canvas (over the version just reviewed), or save this
// canvas as a copy. Nothing is lost: the other person's save and every earlier one are versions.
import { useState } from "react";
import { request } from "../api/client";
import { Modal } from "../components/Modal";
import { compareGraphs, type ConflictDetail } from "../lib/versions";
import type { FlowRecord } from "../lib/types";

export function ConflictDialog(props: {
  flowId: string;
  conflict: ConflictDetail;
  onOverwritten: (flow: FlowRecord) => void;
  onReload: () => void;
  onClose: () => void;
}) {
  const { conflict } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const who = conflict.modified_by.username ?? "Someone";
  const when = conflict.modified_at ? new Date(conflict.modified_at).toLocaleString() : "";
  const cmp = compareGraphs(conflict.current.data, conflict.submitted);

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
  const overwrite = () =>
    run(async () => {
      const headers: Record<string, string> = conflict.current_version_token ? { "If-Match": conflict.current_version_token } : {};
      const flow = await request<FlowRecord>(`/api/v1/flows/${props.flowId}/overwrite`, { method: "POST", json: { data: conflict.submitted }, headers });
      props.onOverwritten(flow);
    });
  const fork = () =>
    run(async () => {
      const copy = await request<FlowRecord>(`/api/v1/flows/${props.flowId}/fork`, { method: "POST", json: { data: conflict.submitted } });
      window.location.assign(`/flow/${copy.id}`);
    });

  const list = (title: string, names: string[]) =>
    names.length ? (
      <li>
        {title}: {names.join(", ")}
      </li>
    ) : null;
  return (
    <Modal title="This flow was changed by someone else" onClose={props.onClose} testId="conflict-dialog">
      <p>
        {who} saved this flow{when ? ` at ${when}` : ""} after you opened it. Your changes were not saved over theirs.
      </p>
      <ul data-testid="conflict-summary">
        {list("Only in their version", cmp.onlyTheirs)}
        {list("Only in yours", cmp.onlyMine)}
        {list("Different in both", cmp.different)}
        {!cmp.onlyTheirs.length && !cmp.onlyMine.length && !cmp.different.length && <li>The components are the same (layout or settings differ).</li>}
      </ul>
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
      </div>
    </Modal>
  );
}
