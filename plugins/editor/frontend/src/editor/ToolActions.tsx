// The actions table of a component in Tool Mode (the reference's "Actions"): each action can be renamed,
// described for the model, turned off, or put under human approval (the run pauses before the call).
import { useState } from "react";
import { Modal } from "../components/Modal";
import { toolActions, toolName, type ToolAction } from "../lib/toolmode";
import type { FlowNode } from "../lib/types";

const APPROVAL = ["approve", "reject"];

export function ToolActionsDialog({ node, onSave, onClose }: { node: FlowNode | null; onSave: (rows: ToolAction[]) => void; onClose: () => void }) {
  const [rows, setRows] = useState<ToolAction[]>(() => (node ? toolActions(node.data.node).map((r) => ({ ...r })) : []));
  if (!node) return null;
  const title = `${node.data.node.display_name ?? node.data.type} › Actions`;
  const patch = (i: number, p: Partial<ToolAction>) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...p } : r)));
  return (
    <Modal
      title={title}
      onClose={onClose}
      wide
      testId="tool-actions"
      footer={
        <>
          <button className="btn" onClick={onClose}>
            Cancel
          </button>
          <button className="btn btn-primary" onClick={() => onSave(rows.map((r) => ({ ...r, name: toolName(r.name) })))}>
            Save
          </button>
        </>
      }
    >
      <p className="muted small">The agent sees each enabled action as a tool: its name and description tell the model when to use it.</p>
      {rows.length === 0 ? (
        <p className="empty">This component has no actions.</p>
      ) : (
        <table className="table actions-table">
          <thead>
            <tr>
              <th scope="col">Enabled</th>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Approval required</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={r.tags?.[0] ?? i} data-testid={`action-${r.tags?.[0] ?? r.name}`}>
                <td>
                  <input type="checkbox" aria-label={`Enable ${r.name}`} checked={r.status !== false} onChange={(e) => patch(i, { status: e.target.checked })} />
                </td>
                <td>
                  <input aria-label={`Name of ${r.tags?.[0] ?? r.name}`} value={r.name} onChange={(e) => patch(i, { name: e.target.value })} />
                </td>
                <td>
                  <textarea aria-label={`Description of ${r.tags?.[0] ?? r.name}`} rows={2} value={r.description} onChange={(e) => patch(i, { description: e.target.value })} />
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Approval required for ${r.name}`}
                    checked={(r.approval_actions ?? []).length > 0}
                    onChange={(e) => patch(i, { approval_actions: e.target.checked ? APPROVAL : [] })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Modal>
  );
}
