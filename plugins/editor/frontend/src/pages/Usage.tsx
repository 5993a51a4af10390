// Usage (issue 30): the caller's model tokens, calls and cost per flow and per model over a chosen period
// (GET /api/v1/monitor/usage), and the budgets that apply to them with what is left (superusers add and remove them).
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { request } from "../api/client";
import { formatWhen, monitorApi, PERIODS, periodStart, type Budget, type BudgetBody, type Period, type UsageReport } from "../api/monitor";
import { ListState, RowButton, SectionHead } from "../components/ListPage";
import { ConfirmDialog } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { Link, TopBar } from "../components/TopBar";
import { useSession } from "../session";
import "./monitor.css";

function figure(metric: Budget["metric"], value: number): string {
  return metric === "cost" ? `$${value.toFixed(4)}` : String(Math.round(value));
}

function UsageTable({ title, keyLabel, report, names, testId }: { title: string; keyLabel: string; report: UsageReport | null; names?: Record<string, string>; testId: string }) {
  return (
    <section className="mon-card" aria-label={title}>
      <h2>{title}</h2>
      <ListState items={report ? report.rows : null} empty="No model calls in this period.">
        {(rows) => (
          <table className="table mon-table" data-testid={testId}>
            <thead>
              <tr>
                <th>{keyLabel}</th>
                <th className="num">Calls</th>
                <th className="num">Tokens in</th>
                <th className="num">Tokens out</th>
                <th className="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.key ?? "none"}>
                  <td>{r.key ? (names?.[r.key] ?? r.key) : "—"}</td>
                  <td className="num">{r.calls}</td>
                  <td className="num">{r.inputTokens}</td>
                  <td className="num">{r.outputTokens}</td>
                  <td className="num">${r.cost.toFixed(4)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListState>
    </section>
  );
}

function NewBudget({ onCreated }: { onCreated: () => void }) {
  const [body, setBody] = useState<BudgetBody>({ scope: "user", scope_id: "", metric: "tokens", period: "month", limit: 100000 });
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      await monitorApi.createBudget({ ...body, scope_id: body.scope_id.trim() });
      notify("success", "Budget added.");
      setBody((b) => ({ ...b, scope_id: "" }));
      onCreated();
    } catch (err) {
      notifyError(err, "Could not add the budget");
    } finally {
      setBusy(false);
    }
  };
  const set = <K extends keyof BudgetBody>(k: K, v: BudgetBody[K]) => setBody((b) => ({ ...b, [k]: v }));
  return (
    <form className="mon-budget-form" onSubmit={(e) => void submit(e)} aria-label="New budget">
      <label>
        Scope
        <select value={body.scope} onChange={(e) => set("scope", e.target.value as BudgetBody["scope"])}>
          <option value="user">User</option>
          <option value="project">Project</option>
          <option value="flow">Flow</option>
        </select>
      </label>
      <label>
        Id of the {body.scope}
        <input required value={body.scope_id} onChange={(e) => set("scope_id", e.target.value)} maxLength={64} />
      </label>
      <label>
        Metric
        <select value={body.metric} onChange={(e) => set("metric", e.target.value as BudgetBody["metric"])}>
          <option value="tokens">Tokens</option>
          <option value="calls">Calls</option>
          <option value="cost">Cost</option>
        </select>
      </label>
      <label>
        Period
        <select value={body.period} onChange={(e) => set("period", e.target.value as BudgetBody["period"])}>
          <option value="day">Day (UTC)</option>
          <option value="month">Month (UTC)</option>
        </select>
      </label>
      <label>
        Limit
        <input type="number" min={0} step="any" required value={body.limit} onChange={(e) => set("limit", Number(e.target.value))} />
      </label>
      <button type="submit" className="btn btn-primary" disabled={busy || !body.scope_id.trim()}>
        Add budget
      </button>
    </form>
  );
}

export function UsagePage() {
  const session = useSession();
  const superuser = !!session.user?.is_superuser;
  const [period, setPeriod] = useState<Period>("30d");
  const [byFlow, setByFlow] = useState<UsageReport | null>(null);
  const [byModel, setByModel] = useState<UsageReport | null>(null);
  const [budgets, setBudgets] = useState<Budget[] | null>(null);
  const [names, setNames] = useState<Record<string, string>>({});
  const [deleting, setDeleting] = useState<Budget | null>(null);

  useEffect(() => {
    request<{ id: string; name: string }[]>("/api/v1/flows/", { query: { header_flows: true, get_all: true, remove_example_flows: true } }).then(
      (flows) => setNames(Object.fromEntries(flows.map((f) => [f.id, f.name]))),
      () => setNames({}),
    );
  }, []);

  useEffect(() => {
    setByFlow(null);
    setByModel(null);
    const start = periodStart(period);
    const empty = (): UsageReport => ({ groupBy: "", rows: [], total: { calls: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0 } });
    Promise.all([monitorApi.usage("flow", start), monitorApi.usage("model", start)]).then(
      ([f, m]) => {
        setByFlow(f);
        setByModel(m);
      },
      (e) => {
        notifyError(e, "Could not load the usage");
        setByFlow(empty());
        setByModel(empty());
      },
    );
  }, [period]);

  const loadBudgets = useCallback(() => {
    monitorApi.budgets().then(setBudgets, (e) => {
      notifyError(e, "Could not load the budgets");
      setBudgets([]);
    });
  }, []);
  useEffect(loadBudgets, [loadBudgets]);

  const total = byFlow?.total;
  return (
    <div className="app-shell">
      <TopBar />
      <main className="page-main mon-page">
        <section aria-labelledby="usage-title">
          <SectionHead id="usage-title" title="Usage">
            <label className="mon-period">
              Period
              <select value={period} onChange={(e) => setPeriod(e.target.value as Period)} data-testid="usage-period">
                {PERIODS.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.label}
                  </option>
                ))}
              </select>
            </label>
          </SectionHead>
          <p className="muted">
            Model calls of the flows you own, counted from the providers' token usage. Each run's details are in its flow's Activity.
          </p>
          <div className="mon-totals" data-testid="usage-totals">
            <div>
              <span className="mon-total-label">Calls</span>
              <strong>{total ? total.calls : "…"}</strong>
            </div>
            <div>
              <span className="mon-total-label">Tokens in</span>
              <strong>{total ? total.inputTokens : "…"}</strong>
            </div>
            <div>
              <span className="mon-total-label">Tokens out</span>
              <strong>{total ? total.outputTokens : "…"}</strong>
            </div>
            <div>
              <span className="mon-total-label">Cost</span>
              <strong>{total ? `$${total.cost.toFixed(4)}` : "…"}</strong>
            </div>
          </div>
          <div className="mon-grid">
            <UsageTable title="Per flow" keyLabel="Flow" report={byFlow} names={names} testId="usage-by-flow" />
            <UsageTable title="Per model" keyLabel="Model" report={byModel} testId="usage-by-model" />
          </div>
        </section>
        <section aria-labelledby="budgets-title" className="mon-card">
          <h2 id="budgets-title">Budgets</h2>
          <p className="muted">
            {superuser
              ? "Limits on tokens, calls or cost per UTC day or month, for a user, a project or a flow. A run over its budget is refused."
              : "The limits that apply to your flows; a run over its budget is refused. An administrator sets them."}
          </p>
          <ListState items={budgets} empty="No budgets apply.">
            {(items) => (
              <table className="table mon-table" data-testid="budgets-table">
                <thead>
                  <tr>
                    <th>Scope</th>
                    <th>Metric</th>
                    <th>Period</th>
                    <th className="num">Limit</th>
                    <th className="num">Used</th>
                    <th className="num">Left</th>
                    <th>Resets</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {items.map((b) => (
                    <tr key={b.id} data-testid="budget-row">
                      <td>
                        {b.scope === "flow" && names[b.scopeId] ? <Link to={`/flow/${b.scopeId}/activity`}>{names[b.scopeId]}</Link> : b.scope}{" "}
                        <code className="mon-session">{b.scopeId}</code>
                      </td>
                      <td>{b.metric}</td>
                      <td>{b.period}</td>
                      <td className="num">{figure(b.metric, b.limit)}</td>
                      <td className="num">{figure(b.metric, b.used)}</td>
                      <td className={`num${b.remaining <= 0 ? " mon-spent" : ""}`}>{figure(b.metric, b.remaining)}</td>
                      <td>{formatWhen(b.resetsAt)}</td>
                      <td className="row-actions">{superuser && <RowButton label="Delete" name={`${b.metric} budget of ${b.scope} ${b.scopeId}`} danger onClick={() => setDeleting(b)} />}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </ListState>
          {superuser && <NewBudget onCreated={loadBudgets} />}
        </section>
      </main>
      {deleting && (
        <ConfirmDialog
          title="Delete budget"
          text={`Delete the ${deleting.metric} budget of ${deleting.scope} ${deleting.scopeId}?`}
          confirmLabel="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={() => {
            const b = deleting;
            setDeleting(null);
            monitorApi.deleteBudget(b.id).then(
              () => {
                notify("success", "Budget deleted.");
                loadBudgets();
              },
              (e) => notifyError(e, "Could not delete the budget"),
            );
          }}
        />
      )}
    </div>
  );
}
