// The executions of one flow: newest first, filtered by status and trigger; details, retry, open in the Playground.
import { useEffect, useMemo, useState } from "react";
import { request } from "../api/client";
import { notify } from "../components/toast";
import { latestOnly } from "../lib/latest";
import { EXECUTION_STATUSES, EXECUTION_TRIGGERS, formatDuration, formatWhen, statusTone, type Execution } from "../lib/triggers";

const POLL_MS = 3000;
const LIVE = new Set(["scheduled", "queued", "running"]);

export function StatusPill({ status }: { status: string }) {
  const tone = statusTone(status);
  return <span className={`pill ${tone === "ok" ? "pill-ok" : tone === "error" ? "pill-error" : "pill-muted"}`}>{status}</span>;
}

export function ExecutionsTab(props: { flowId: string; onOpenInPlayground?: (input: string) => void }) {
  const [status, setStatus] = useState("");
  const [trigger, setTrigger] = useState("");
  const [rows, setRows] = useState<Execution[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<Execution | null>(null);
  const [busy, setBusy] = useState(false);
  const startLoad = useMemo(latestOnly, []);

  const load = async () => {
    const isNewest = startLoad();
    try {
      const got = await request<Execution[]>("/api/v1/executions", { query: { flow_id: props.flowId, status: status || undefined, trigger: trigger || undefined, limit: 100 } });
      if (!isNewest()) return;
      setRows(got);
      setError(null);
    } catch (e) {
      if (isNewest()) setError((e as Error).message);
    }
  };
  useEffect(() => {
    void load();
  }, [props.flowId, status, trigger]);
  // runs land from other processes (workers, schedules, webhooks): the list and an unfinished execution follow along
  const selectedLive = selected !== null && LIVE.has(selected.status);
  useEffect(() => {
    if (selected !== null && !selectedLive) return;
    const timer = window.setInterval(() => {
      if (document.hidden) return;
      if (selected) void open(selected.id);
      else void load();
    }, POLL_MS);
    return () => window.clearInterval(timer);
  }, [props.flowId, status, trigger, selected?.id, selectedLive]);

  const open = async (id: string) => {
    try {
      setSelected(await request<Execution>(`/api/v1/executions/${id}`));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const retry = async (ex: Execution) => {
    setBusy(true);
    setError(null);
    try {
      const started = await request<Execution>(`/api/v1/executions/${ex.id}/retry`, { method: "POST" });
      notify("success", `Retry started (attempt ${started.attempt}).`);
      setSelected(started);
      await load();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (selected) {
    const ex = selected;
    return (
      <div data-testid="execution-detail">
        <div className="section-head">
          <h3>
            Execution <StatusPill status={ex.status} />
          </h3>
          <button className="btn btn-small" onClick={() => setSelected(null)}>
            Back to the list
          </button>
        </div>
        {error && <p className="form-error" role="alert">{error}</p>}
        <dl className="api-facts">
          <dt>Trigger</dt>
          <dd>{ex.trigger}</dd>
          <dt>Started</dt>
          <dd>{formatWhen(ex.started_at)}</dd>
          <dt>Duration</dt>
          <dd>{formatDuration(ex.duration_s)}</dd>
          <dt>Attempt</dt>
          <dd>
            {ex.attempt}
            {ex.retry_of && <span className="muted"> (retry of {ex.retry_of})</span>}
          </dd>
          <dt>Id</dt>
          <dd>
            <code>{ex.id}</code>
          </dd>
        </dl>
        <h4>Input</h4>
        <pre className="execution-text" tabIndex={0} data-testid="execution-input">
          {ex.input ?? "(none)"}
        </pre>
        <h4>Output</h4>
        <pre className="execution-text" tabIndex={0} data-testid="execution-output">
          {ex.output ?? "(none)"}
        </pre>
        {ex.error && (
          <>
            <h4>Error</h4>
            <pre className="execution-text execution-error" tabIndex={0} data-testid="execution-error">
              {ex.error}
            </pre>
          </>
        )}
        <div className="modal-actions">
          {props.onOpenInPlayground && (
            <button className="btn" onClick={() => props.onOpenInPlayground?.(ex.input ?? "")} title="Open the Playground with this execution's input">
              Open the input in the Playground
            </button>
          )}
          <button className="btn" onClick={() => void open(ex.id)}>
            Refresh
          </button>
          <button
            className="btn btn-primary"
            disabled={busy || !ex.retryable}
            title={ex.retryable ? "Run the same request again" : "It is running, or its request was not kept (an unsaved editor graph or a request over 64 KiB)"}
            onClick={() => void retry(ex)}
          >
            Retry
          </button>
        </div>
      </div>
    );
  }

  return (
    <div data-testid="executions-tab">
      <div className="automation-filters">
        <label className="field field-inline">
          <span>Status</span>
          <select aria-label="Filter by status" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any</option>
            {EXECUTION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="field field-inline">
          <span>Trigger</span>
          <select aria-label="Filter by trigger" value={trigger} onChange={(e) => setTrigger(e.target.value)}>
            <option value="">Any</option>
            {EXECUTION_TRIGGERS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button className="btn btn-small" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {error && <p className="form-error" role="alert">{error}</p>}
      {rows === null ? (
        <p aria-busy="true">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted" data-testid="executions-empty">
          No executions{status || trigger ? " match these filters" : " yet: run the flow (Playground, API, a schedule or a webhook)"}.
        </p>
      ) : (
        <table className="table" data-testid="executions-table">
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Trigger</th>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
              <th scope="col">Attempt</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((ex) => (
              <tr key={ex.id} data-testid="execution-row">
                <td>
                  <StatusPill status={ex.status} />
                </td>
                <td>{ex.trigger}</td>
                <td>{formatWhen(ex.started_at)}</td>
                <td>{formatDuration(ex.duration_s)}</td>
                <td>{ex.attempt}</td>
                <td className="row-actions">
                  <button className="btn btn-small" onClick={() => void open(ex.id)} aria-label={`Details of the ${ex.trigger} execution started ${formatWhen(ex.started_at)}`}>
                    Details
                  </button>
                  <button className="btn btn-small" disabled={busy || !ex.retryable} onClick={() => void retry(ex)} aria-label={`Retry the ${ex.trigger} execution started ${formatWhen(ex.started_at)}`}>
                    Retry
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
