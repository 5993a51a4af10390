// Flow Activity (issue 30): a flow's runs, newest first and paged, from the native traces
// (GET /api/v1/monitor/traces?flow_id=); a selected run shows its span tree (components, model calls under them).
import { useEffect, useState } from "react";
import { api } from "../api/client";
import { formatMs, formatWhen, monitorApi, type Span, type TraceDetail, type TracePage } from "../api/monitor";
import { SectionHead } from "../components/ListPage";
import { notifyError } from "../components/toast";
import { Link, TopBar } from "../components/TopBar";
import "./monitor.css";

const PAGE_SIZE = 20;

function StatusBadge({ status }: { status: string }) {
  const label = status === "ok" ? "Success" : status === "error" ? "Error" : "Paused";
  return <span className={`mon-status mon-status-${status}`}>{label}</span>;
}

function textOf(value: Record<string, unknown> | null | undefined): string {
  if (!value) return "";
  const first = Object.values(value).find((v) => v !== null && v !== undefined && v !== "");
  if (first === undefined) return "";
  return typeof first === "string" ? first : JSON.stringify(first);
}

function SpanNode({ span }: { span: Span }) {
  const tokens = span.tokenUsage;
  return (
    <li className="mon-span" data-testid="span" data-span-type={span.type}>
      <div className="mon-span-row">
        <span className={`mon-kind mon-kind-${span.type}`}>{span.type === "llm" ? "Model" : "Component"}</span>
        <span className="mon-span-name">{span.name}</span>
        {span.modelName && <code className="mon-model">{span.modelName}</code>}
        <StatusBadge status={span.status} />
        <span className="mon-figure" title="Duration">{formatMs(span.latencyMs)}</span>
        {tokens && (
          <span className="mon-figure" title={`${tokens.promptTokens} in, ${tokens.completionTokens} out`}>
            {tokens.totalTokens} tokens ({tokens.promptTokens} in / {tokens.completionTokens} out)
          </span>
        )}
      </div>
      {span.error && <p className="mon-error">{span.error}</p>}
      {(span.inputs || span.outputs) && (
        <details className="mon-io">
          <summary>Inputs and outputs</summary>
          {span.inputs && <pre>{JSON.stringify(span.inputs, null, 2)}</pre>}
          {span.outputs && <pre>{JSON.stringify(span.outputs, null, 2)}</pre>}
        </details>
      )}
      {span.children.length > 0 && (
        <ul className="mon-span-children">
          {span.children.map((c) => (
            <SpanNode key={c.id} span={c} />
          ))}
        </ul>
      )}
    </li>
  );
}

function RunDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const [trace, setTrace] = useState<TraceDetail | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    setTrace(null);
    setFailed(false);
    monitorApi.trace(id).then(setTrace, (e) => {
      notifyError(e, "Could not load the run");
      setFailed(true);
    });
  }, [id]);
  return (
    <aside className="mon-detail" aria-label="Run details" data-testid="run-detail">
      <div className="mon-detail-head">
        <h2>Run</h2>
        <button className="btn btn-small" onClick={onClose}>
          Close
        </button>
      </div>
      {failed ? (
        <p className="empty">This run could not be loaded.</p>
      ) : !trace ? (
        <p className="muted">Loading…</p>
      ) : (
        <>
          <dl className="mon-facts">
            <dt>Started</dt>
            <dd>{formatWhen(trace.startTime)}</dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={trace.status} />
            </dd>
            <dt>Duration</dt>
            <dd>{formatMs(trace.totalLatencyMs)}</dd>
            <dt>Tokens</dt>
            <dd>{trace.totalTokens}</dd>
            <dt>Session</dt>
            <dd>
              <code>{trace.sessionId ?? "—"}</code>
            </dd>
            <dt>Run id</dt>
            <dd>
              <code>{trace.id}</code>
            </dd>
            {textOf(trace.input) && (
              <>
                <dt>Input</dt>
                <dd className="mon-text">{textOf(trace.input)}</dd>
              </>
            )}
            {textOf(trace.output) && (
              <>
                <dt>Output</dt>
                <dd className="mon-text">{textOf(trace.output)}</dd>
              </>
            )}
          </dl>
          <h3>Spans</h3>
          {trace.spans.length === 0 ? (
            <p className="empty">This run recorded no component spans.</p>
          ) : (
            <ul className="mon-span-tree" data-testid="span-tree">
              {trace.spans.map((s) => (
                <SpanNode key={s.id} span={s} />
              ))}
            </ul>
          )}
        </>
      )}
    </aside>
  );
}

export function ActivityPage({ flowId }: { flowId: string }) {
  const [flowName, setFlowName] = useState<string>("");
  const [page, setPage] = useState(1);
  const [data, setData] = useState<TracePage | null>(null);
  const [failed, setFailed] = useState(false);
  const [selected, setSelected] = useState<string | null>(null);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    api.readFlow(flowId).then(
      (f) => setFlowName(f.name),
      () => setFlowName(""),
    );
  }, [flowId]);

  useEffect(() => {
    setFailed(false);
    monitorApi.traces(flowId, page, PAGE_SIZE).then(setData, (e) => {
      notifyError(e, "Could not load the flow's activity");
      setFailed(true);
      setData({ traces: [], total: 0, pages: 0 });
    });
  }, [flowId, page, reload]);

  // the first page follows new runs (a run's trace is written as it ends, a moment after its answer shows)
  useEffect(() => {
    if (page !== 1 || failed) return;
    const timer = window.setInterval(() => {
      if (!document.hidden) setReload((n) => n + 1);
    }, 5000);
    return () => window.clearInterval(timer);
  }, [page, failed]);

  return (
    <div className="app-shell">
      <TopBar />
      <main className="page-main mon-page">
        <section aria-labelledby="activity-title">
          <SectionHead id="activity-title" title={flowName ? `Activity: ${flowName}` : "Flow activity"}>
            <div className="mon-actions">
              <button className="btn" onClick={() => setReload((n) => n + 1)}>
                Refresh
              </button>
              <Link to={`/flow/${flowId}`} className="btn">
                Back to the editor
              </Link>
            </div>
          </SectionHead>
          <p className="muted">Every run of this flow, newest first: select one to see its components and model calls.</p>
          <div className="mon-split">
            <div className="mon-list">
              {data === null ? (
                <p className="muted">Loading…</p>
              ) : failed ? (
                <p className="empty" data-testid="activity-error">
                  The activity could not be loaded. <button className="btn btn-small" onClick={() => setReload((n) => n + 1)}>Try again</button>
                </p>
              ) : data.traces.length === 0 ? (
                <p className="empty" data-testid="activity-empty">
                  No runs yet. Run the flow from the Playground or the API and it shows here.
                </p>
              ) : (
                <>
                  <table className="table mon-table" data-testid="runs-table">
                    <thead>
                      <tr>
                        <th>Time</th>
                        <th>Status</th>
                        <th>Duration</th>
                        <th>Tokens</th>
                        <th>Session</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.traces.map((t) => (
                        <tr
                          key={t.id}
                          className={t.id === selected ? "mon-selected" : ""}
                          data-testid="run-row"
                          aria-selected={t.id === selected}
                          onClick={() => setSelected(t.id)}
                        >
                          <td>
                            <button className="mon-link" onClick={() => setSelected(t.id)} aria-label={`Open the run of ${formatWhen(t.startTime)}`}>
                              {formatWhen(t.startTime)}
                            </button>
                          </td>
                          <td>
                            <StatusBadge status={t.status} />
                          </td>
                          <td>{formatMs(t.totalLatencyMs)}</td>
                          <td>{t.totalTokens}</td>
                          <td>
                            <code className="mon-session">{t.sessionId ?? "—"}</code>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                  <nav className="mon-pager" aria-label="Pages of runs">
                    <button className="btn btn-small" disabled={page <= 1} onClick={() => setPage((p) => p - 1)}>
                      Previous
                    </button>
                    <span className="muted" data-testid="runs-page">
                      Page {page} of {Math.max(data.pages, 1)} · {data.total} run{data.total === 1 ? "" : "s"}
                    </span>
                    <button className="btn btn-small" disabled={page >= data.pages} onClick={() => setPage((p) => p + 1)}>
                      Next
                    </button>
                  </nav>
                </>
              )}
            </div>
            {selected && <RunDetail id={selected} onClose={() => setSelected(null)} />}
          </div>
        </section>
      </main>
    </div>
  );
}
