/**
 * Keyboard connect (accessibility): Enter or Space on a focused handle opens this list of the other ends a
 * connection could reach. Accepted ones first; choosing one connects exactly as a drop there would, choosing a
 * refused one says why (the same reason a refused drop gives). Escape cancels and focus goes back to the handle.
 */
import { useMemo, useState } from "react";
import { Modal } from "../components/Modal";
import { keyCandidates, originLabel, type KeyCandidate, type KeyOrigin } from "../lib/keyconnect";
import type { ConnectionRequest } from "../lib/flow";
import type { FlowEdge, FlowNode } from "../lib/types";

export function KeyConnectDialog(props: {
  origin: KeyOrigin;
  nodes: FlowNode[];
  edges: FlowEdge[];
  onConnect: (c: ConnectionRequest) => void;
  onClose: () => void;
}) {
  const { origin, nodes, edges } = props;
  const all = useMemo(() => keyCandidates(nodes, edges, origin), [nodes, edges, origin]);
  const [filter, setFilter] = useState("");
  const [refused, setRefused] = useState<string | null>(null);
  const q = filter.trim().toLowerCase();
  const shown = q ? all.filter((c) => `${c.nodeName} ${c.label} ${c.types.join(" ")}`.toLowerCase().includes(q)) : all;
  const accepted = shown.filter((c) => !c.refusal);
  const others = shown.filter((c) => c.refusal);
  const fromOutput = origin.handleType === "source";
  const choose = (c: KeyCandidate) => {
    if (c.refusal) setRefused(`Not connected: ${c.refusal}`);
    else props.onConnect(c.request);
  };
  const row = (c: KeyCandidate) => (
    <li key={`${c.request.source}|${c.request.sourceHandle}|${c.request.target}|${c.request.targetHandle}`}>
      <button
        type="button"
        className={`keyconnect-item${c.refusal ? " keyconnect-refused" : ""}`}
        onClick={() => choose(c)}
        aria-describedby={c.refusal ? "keyconnect-refused-note" : undefined}
      >
        <span>
          {c.nodeName} · {c.label}
        </span>
        <span className="muted small"> {c.types.join(" | ")}</span>
      </button>
    </li>
  );
  return (
    <Modal title={`Connect ${originLabel(nodes, origin)}`} onClose={props.onClose} testId="keyconnect">
      <label className="field">
        <span>{fromOutput ? "Find an input" : "Find an output"}</span>
        <input value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="Component, field or type" autoFocus />
      </label>
      {refused && (
        <p className="form-error" role="alert" data-testid="keyconnect-refusal">
          {refused}
        </p>
      )}
      <h3 className="keyconnect-head">{fromOutput ? "Inputs that accept it" : "Outputs it accepts"} ({accepted.length})</h3>
      {accepted.length ? (
        <ul className="keyconnect-list" aria-label="Accepted">
          {accepted.map(row)}
        </ul>
      ) : (
        <p className="muted">None on this canvas{q ? " matches" : ""}.</p>
      )}
      {others.length > 0 && (
        <>
          <h3 className="keyconnect-head">Not accepted ({others.length})</h3>
          <p className="muted small" id="keyconnect-refused-note">
            Choose one to hear why.
          </p>
          <ul className="keyconnect-list" aria-label="Not accepted">
            {others.map(row)}
          </ul>
        </>
      )}
    </Modal>
  );
}
