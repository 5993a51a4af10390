// A flow's retry policy (failed scheduled and signed-webhook runs) and its error flow.
import { useEffect, useState } from "react";
import { request } from "../api/client";
import { notify } from "../components/toast";
import { policyBody, type RetryPolicy } from "../lib/triggers";

interface FlowHeader {
  id: string;
  name: string;
}

export function PolicyTab(props: { flowId: string }) {
  const [policy, setPolicy] = useState<RetryPolicy | null>(null);
  const [flows, setFlows] = useState<FlowHeader[]>([]);
  const [attempts, setAttempts] = useState("1");
  const [backoff, setBackoff] = useState("10");
  const [errorFlow, setErrorFlow] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const url = `/api/v1/executions/policies/${props.flowId}`;

  useEffect(() => {
    let live = true;
    void (async () => {
      try {
        const [got, all] = await Promise.all([
          request<RetryPolicy>(url),
          request<FlowHeader[]>("/api/v1/flows/", { query: { header_flows: true, get_all: true, remove_example_flows: true } }),
        ]);
        if (!live) return;
        setPolicy(got);
        setAttempts(String(got.attempts));
        setBackoff(String(got.backoff_s));
        setErrorFlow(got.error_flow_id ?? "");
        setFlows(Array.isArray(all) ? all.filter((f) => f.id !== props.flowId) : []);
      } catch (e) {
        if (live) setError((e as Error).message);
      }
    })();
    return () => {
      live = false;
    };
  }, [props.flowId]);

  const save = async () => {
    const made = policyBody(attempts, backoff, errorFlow);
    if ("error" in made) {
      setError(made.error);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      setPolicy(await request<RetryPolicy>(url, { method: "PUT", json: made.body }));
      notify("success", "Retry policy saved");
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      data-testid="policy-tab"
      aria-label="Retry policy"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <p className="muted">
        A failed run started by a schedule or a signed webhook runs again until it has run this many times in all, waiting the backoff after the first failure and twice as long
        each time after. When it fails for good, the error flow (if any) runs with the failure's details as its input.
      </p>
      {error && <p className="form-error" role="alert">{error}</p>}
      {policy === null && !error ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <>
          <div className="field-row">
            <label className="field">
              <span>Attempts in all (1 to 10)</span>
              <input aria-label="Attempts" type="number" min={1} max={10} value={attempts} onChange={(e) => setAttempts(e.target.value)} />
            </label>
            <label className="field">
              <span>First backoff (seconds)</span>
              <input aria-label="Backoff seconds" type="number" min={0} step="any" value={backoff} onChange={(e) => setBackoff(e.target.value)} />
            </label>
          </div>
          <label className="field">
            <span>Error flow</span>
            <select aria-label="Error flow" value={errorFlow} onChange={(e) => setErrorFlow(e.target.value)}>
              <option value="">(none)</option>
              {flows.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          </label>
          <div className="modal-actions">
            <button type="submit" className="btn btn-primary" disabled={busy}>
              Save policy
            </button>
          </div>
        </>
      )}
    </form>
  );
}
