/** The editor's big field editor and keyboard shortcut sheet. */
import { useState } from "react";
import { Modal } from "../components/Modal";
import { isTemplateField } from "../lib/flow";
import type { FlowNode } from "../lib/types";
import { useEditor } from "./store";

export function BigEditor({ nodeId, field, nodes, onClose }: { nodeId: string; field: string; nodes: FlowNode[]; onClose: () => void }) {
  const node = nodes.find((n) => n.id === nodeId);
  const f = node?.data.node.template[field];
  const ctx = useEditor();
  const isJson = isTemplateField(f) && (f.type === "dict" || f.type === "NestedDict" || f.type === "table");
  const initial = !isTemplateField(f) ? "" : typeof f.value === "string" ? f.value : JSON.stringify(f.value ?? (isJson ? {} : ""), null, 2);
  const [text, setText] = useState(initial);
  const [err, setErr] = useState<string | null>(null);
  if (!node || !isTemplateField(f)) return null;
  const mono = f.type === "code" || isJson;
  return (
    <Modal
      title={`${node.data.node.display_name ?? node.data.type} › ${f.display_name ?? field}`}
      onClose={onClose}
      wide
      footer={
        <>
          <button className="btn" onClick={onClose}>
            Cancel
          </button>
          <button
            className="btn btn-primary"
            onClick={() => {
              let value: unknown = text;
              if (isJson) {
                try {
                  value = text.trim() ? JSON.parse(text) : {};
                } catch (e) {
                  return setErr(`Not valid JSON: ${(e as Error).message}`);
                }
              }
              ctx.setField(nodeId, field, { value });
              onClose();
            }}
          >
            Apply
          </button>
        </>
      }
    >
      {f.info && <p className="muted">{f.info}</p>}
      {f.type === "prompt" && <p className="muted small">Write {"{variable}"} to add an input field for it.</p>}
      {err && (
        <p className="form-error" role="alert">
          {err}
        </p>
      )}
      <textarea className={`big-editor${mono ? " mono" : ""}`} aria-label={f.display_name ?? field} value={text} onChange={(e) => setText(e.target.value)} autoFocus spellCheck={!mono} />
    </Modal>
  );
}

export const SHORTCUTS: [string, string][] = [
  ["Ctrl+S", "Save"],
  ["Ctrl+Z", "Undo"],
  ["Ctrl+Shift+Z or Ctrl+Y", "Redo"],
  ["Ctrl+C / Ctrl+V", "Copy / paste the selected components"],
  ["Ctrl+D", "Duplicate the selection"],
  ["Ctrl+G", "Group the selected components"],
  ["Ctrl+Shift+G", "Ungroup the selected group"],
  ["Delete or Backspace", "Delete the selection"],
  ["Shift+drag", "Select several components"],
  ["Enter (in the component list)", "Add the focused component"],
  ["Escape", "Close a dialog"],
  ["?", "Show this sheet"],
];

/** The keyboard shortcut sheet (``?``): on a Mac, Ctrl is Cmd. */
export function ShortcutSheet({ onClose }: { onClose: () => void }) {
  return (
    <Modal title="Keyboard shortcuts" onClose={onClose} testId="shortcuts">
      <table className="shortcuts">
        <tbody>
          {SHORTCUTS.map(([keys, what]) => (
            <tr key={keys}>
              <td>
                {keys.split(/( or | \/ |\+)/).map((part, i) =>
                  part === "+" ? "+" : part === " or " || part === " / " ? part : <kbd key={i}>{part}</kbd>,
                )}
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small">On a Mac, use Cmd instead of Ctrl.</p>
    </Modal>
  );
}
