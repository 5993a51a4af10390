// Signed webhook triggers of one flow: create (the signing secret is shown once), copy the URL, rotate, disable, delete.
import { useState } from "react";
import { request } from "../api/client";
import { CopyButton } from "../components/CopyButton";
import { ConfirmDialog } from "../components/Modal";
import { useFlowRows } from "./useFlowRows";
import { signingSnippet, type SignedTrigger } from "../lib/triggers";

export function WebhooksTab(props: { flowId: string }) {
  const { rows, error, busy, act } = useFlowRows<SignedTrigger>("/api/v1/triggers", props.flowId);
  const [name, setName] = useState("");
  /** the trigger whose secret was just made: the only time it is shown */
  const [fresh, setFresh] = useState<SignedTrigger | null>(null);
  const [deleting, setDeleting] = useState<SignedTrigger | null>(null);
  const [rotating, setRotating] = useState<SignedTrigger | null>(null);
  const origin = window.location.origin;

  const create = async () => {
    const body: Record<string, unknown> = { flow_id: props.flowId };
    if (name.trim()) body.name = name.trim();
    const made = await act(() => request<SignedTrigger>("/api/v1/triggers", { method: "POST", json: body }), "Signed webhook created");
    if (made) {
      setFresh(made);
      setName("");
    }
  };
  const rotate = async (t: SignedTrigger) => {
    const made = await act(() => request<SignedTrigger>(`/api/v1/triggers/${t.id}/signing-secret`, { method: "POST" }), "New signing secret made: the old one is refused from now on");
    if (made) setFresh(made);
  };
  const full = (t: SignedTrigger) => (/^https?:/.test(t.ingress_url) ? t.ingress_url : `${origin}${t.ingress_url}`);

  return (
    <div data-testid="webhooks-tab">
      <p className="muted">
        A signed webhook runs this flow when a sender posts to its URL with a timestamp and an HMAC-SHA256 signature made with the webhook's own secret. Anything unsigned, stale or
        wrongly signed is refused.
      </p>
      {error && <p className="form-error" role="alert">{error}</p>}
      {fresh?.signing_secret && (
        <div className="secret-once" role="status" data-testid="trigger-secret">
          <p>
            The signing secret of <strong>{fresh.name}</strong>. Copy it now: it is not shown again (rotate it to get a new one).
          </p>
          <div className="code-block">
            <pre tabIndex={0} data-testid="trigger-secret-value">
              {fresh.signing_secret}
            </pre>
            <CopyButton text={fresh.signing_secret} />
          </div>
          <details>
            <summary>How a sender signs a delivery (Python)</summary>
            <div className="code-block">
              <pre tabIndex={0}>{signingSnippet(fresh, origin)}</pre>
              <CopyButton text={signingSnippet(fresh, origin)} />
            </div>
          </details>
          <button className="btn btn-small" onClick={() => setFresh(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form
        className="automation-filters"
        aria-label="New signed webhook"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <label className="field field-inline">
          <span>Name</span>
          <input aria-label="Webhook name" placeholder="optional" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Create signed webhook
        </button>
      </form>
      {rows === null ? (
        <p aria-busy="true">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted">No signed webhooks for this flow.</p>
      ) : (
        <ul className="automation-list" data-testid="triggers-list">
          {rows.map((t) => (
            <li key={t.id} className="automation-item" data-testid="trigger-row">
              <div className="section-head">
                <div>
                  <strong>{t.name}</strong> <span className={`pill ${t.enabled ? "pill-ok" : "pill-muted"}`}>{t.enabled ? "enabled" : "disabled"}</span>
                  <div className="muted small">
                    Timestamps within {t.tolerance_s} s · headers <code>{t.timestamp_header}</code>, <code>{t.signature_header}</code>
                  </div>
                </div>
                <div className="row-actions">
                  <button
                    className="btn btn-small"
                    disabled={busy}
                    onClick={() => void act(() => request(`/api/v1/triggers/${t.id}`, { method: "PATCH", json: { enabled: !t.enabled } }), t.enabled ? "Webhook disabled" : "Webhook enabled")}
                  >
                    {t.enabled ? "Disable" : "Enable"}
                  </button>
                  <button className="btn btn-small" disabled={busy} onClick={() => setRotating(t)} aria-label={`Rotate the secret of ${t.name}`}>
                    Rotate secret
                  </button>
                  <button className="btn btn-small btn-danger" disabled={busy} onClick={() => setDeleting(t)} aria-label={`Delete webhook ${t.name}`}>
                    Delete
                  </button>
                </div>
              </div>
              <div className="code-block">
                <pre tabIndex={0} data-testid="trigger-url">
                  {full(t)}
                </pre>
                <CopyButton text={full(t)} />
              </div>
            </li>
          ))}
        </ul>
      )}
      {rotating && (
        <ConfirmDialog
          title="Rotate the signing secret"
          text={`Make a new secret for “${rotating.name}”? Senders using the old one are refused from now on.`}
          confirmLabel="Rotate"
          onClose={() => setRotating(null)}
          onConfirm={() => {
            const t = rotating;
            setRotating(null);
            void rotate(t);
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete signed webhook"
          text={`Delete “${deleting.name}”? Its URL stops working.`}
          confirmLabel="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={() => {
            const t = deleting;
            setDeleting(null);
            void act(() => request(`/api/v1/triggers/${t.id}`, { method: "DELETE" }), "Webhook deleted");
          }}
        />
      )}
    </div>
  );
}
