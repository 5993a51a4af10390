/** The node toolbar's dialogs: the component's code (read-only, never run from here) and its field controls. */
import { useState } from "react";
import { Modal } from "../components/Modal";
import { isTemplateField, templateFields } from "../lib/flow";
import type { FlowNode, FrontendNode, TemplateField } from "../lib/types";

export type NodeDialogKind = "code" | "controls";

export function CodeView({ node, onClose }: { node: FlowNode; onClose: () => void }) {
  const f = node.data.node.template.code;
  const code = isTemplateField(f) && typeof f.value === "string" ? f.value : "";
  return (
    <Modal title={`Code of ${node.data.node.display_name || node.data.type}`} onClose={onClose} wide testId="code-view">
      <p className="muted small">Read-only: the server runs its own installed component, never code sent from the editor.</p>
      <pre className="code-view" tabIndex={0} aria-label="Component code" data-testid="code-text">
        {code}
      </pre>
    </Modal>
  );
}

/** The fields a user can show on the node or keep under "Show advanced" (the reference's Controls). */
export function controllableFields(node: FrontendNode): [string, TemplateField][] {
  return templateFields(node).filter(([n, f]) => f.show !== false && n !== "code" && n !== "tools_metadata");
}

export function ControlsDialog({ node, onSave, onClose }: { node: FlowNode; onSave: (advanced: Record<string, boolean>) => void; onClose: () => void }) {
  const fields = controllableFields(node.data.node);
  const [shown, setShown] = useState<Record<string, boolean>>(() => Object.fromEntries(fields.map(([n, f]) => [n, !f.advanced])));
  return (
    <Modal
      title={`Controls of ${node.data.node.display_name || node.data.type}`}
      onClose={onClose}
      testId="controls"
      footer={
        <>
          <button className="btn" onClick={onClose}>
            Cancel
          </button>
          <button className="btn btn-primary" onClick={() => onSave(Object.fromEntries(fields.map(([n]) => [n, !shown[n]])))}>
            Apply
          </button>
        </>
      }
    >
      <p className="muted small">Checked fields show on the node; the others wait under "Show advanced". A field's value is kept either way.</p>
      <table className="controls-table">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Show on the node</th>
          </tr>
        </thead>
        <tbody>
          {fields.map(([n, f]) => (
            <tr key={n}>
              <td>
                {f.display_name || n}
                {f.info && <div className="muted small">{f.info}</div>}
              </td>
              <td>
                <input type="checkbox" role="switch" aria-label={`Show ${f.display_name || n} on the node`} checked={shown[n]} onChange={(e) => setShown((s) => ({ ...s, [n]: e.target.checked }))} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Modal>
  );
}
