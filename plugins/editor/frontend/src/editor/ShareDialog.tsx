// Share a flow publicly: create or revoke its canonical PUBLIC share and copy the playground link.
import { useEffect, useMemo, useState } from "react";
import { request } from "../api/client";
import { CopyButton } from "../components/CopyButton";
import { Modal } from "../components/Modal";
import { notify } from "../components/toast";
import { latestOnly } from "../lib/latest";

interface Share {
  id: string;
  scope: string;
  permission_level: string;
}

interface ShareStatus {
  shares: Share[];
  effective_grant: "share" | "access_type" | "a2a_folder" | null;
  public_url: string | null;
}

const LEGACY: Record<string, string> = {
  access_type: "The flow's access type is PUBLIC (a legacy setting), so the link works without a share.",
  a2a_folder: "The flow is an A2A agent in a project whose authentication is none (a legacy setting), so the link works without a share.",
};

export function ShareDialog(props: { flowId: string; onClose: () => void }) {
  const [status, setStatus] = useState<ShareStatus | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const base = `/api/v1/flows/${props.flowId}/shares`;

  const startLoad = useMemo(latestOnly, []);
  const load = async () => {
    const isNewest = startLoad();
    try {
      const got = await request<ShareStatus>(base);
      if (isNewest()) setStatus(got);
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
  const share = status?.shares[0];
  const link = `${window.location.origin}/playground/${props.flowId}`;
  return (
    <Modal title="Share" onClose={props.onClose} testId="share-dialog">
      <p className="muted">
        Anyone with the link can chat with this flow in a public playground, without signing in. They run it as nobody: none of your
        variables, files or keys are reachable, and they cannot change the flow. The link is not listed anywhere.
      </p>
      {error && <p className="error" role="alert">{error}</p>}
      {status === null ? (
        <p aria-busy="true">Loading…</p>
      ) : status.effective_grant ? (
        <>
          <div className="code-block">
            <pre data-testid="share-link" tabIndex={0}>
              {link}
            </pre>
            <CopyButton text={link} />
          </div>
          {status.effective_grant !== "share" && <p className="muted">{LEGACY[status.effective_grant]}</p>}
        </>
      ) : (
        <p data-testid="share-state">This flow is private.</p>
      )}
      <div className="modal-actions">
        {share ? (
          <button
            className="btn btn-danger"
            disabled={busy}
            onClick={() => void act(() => request(`${base}/${share.id}`, { method: "DELETE" }), "Public link revoked")}
          >
            Revoke public link
          </button>
        ) : (
          <button
            className="btn btn-primary"
            disabled={busy || status === null}
            onClick={() => void act(() => request(base, { method: "POST", json: { scope: "PUBLIC", permission_level: "execute" } }), "Public link created")}
          >
            Create public link
          </button>
        )}
        <button className="btn" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}
