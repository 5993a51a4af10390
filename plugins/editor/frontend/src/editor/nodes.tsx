import { Handle, NodeResizer, NodeToolbar, Position, type NodeProps } from "@xyflow/react";
import { memo, useMemo, useState } from "react";
import { fieldHasHandle, handleHint, typeColour } from "../lib/compat";
import { encodeHandle, primaryType, templateFields, visibleOutputs } from "../lib/flow";
import { isToolMode, supportsToolMode, toolActions, toolArgumentFields } from "../lib/toolmode";
import type { GenericNodeData, SourceHandle, TargetHandle } from "../lib/types";
import { Icon } from "../components/Icon";
import { categoryIcon, categoryOf } from "../lib/categories";
import { Markdown } from "../lib/markdown";
import { FieldInput } from "./FieldInput";
import { useSession } from "../session";
import { useConnectedFields, useDragOrigin, useEditor, useNodeRun } from "./store";

function StatusBadge({ id }: { id: string }) {
  const run = useNodeRun(id);
  if (!run) return null;
  const text =
    run.status === "running" ? "Running…" : run.status === "queued" ? "Waiting" : run.status === "done" ? `Done${run.duration ? ` · ${run.duration}` : ""}` : run.status === "error" ? "Error" : "Skipped";
  const logged = run.logs?.length ?? 0;
  return (
    <span className={`status status-${run.status}${logged && run.status === "done" ? " status-logged" : ""}`} data-testid={`status-${id}`} role="status">
      {text}
      {logged > 0 && ` · ${logged} log${logged > 1 ? "s" : ""}`}
    </span>
  );
}

/** Under a node after a run: its output or error, and a Logs tab with what the component logged. */
function RunOutput({ id }: { id: string }) {
  const run = useNodeRun(id);
  const [tab, setTab] = useState<"output" | "logs">("output");
  if (!run || (run.status !== "done" && run.status !== "error")) return null;
  const logs = run.logs ?? [];
  const main =
    run.status === "error" && run.error ? (
      <div className="node-error" role="alert" data-testid={`error-${id}`}>
        {run.error}
      </div>
    ) : run.preview ? (
      <div className="node-preview" title={run.preview} data-testid={`preview-${id}`}>
        {run.preview}
      </div>
    ) : (
      <div className="node-preview node-empty" data-testid={`preview-${id}`}>
        {logs.length ? "No output; see the logs." : "No output."}
      </div>
    );
  if (!logs.length) return main;
  const shown = tab === "logs" ? "logs" : "output";
  return (
    <div className="node-run nodrag">
      <div className="node-tabs" role="tablist" aria-label="Run result">
        <button type="button" role="tab" aria-selected={shown === "output"} className={shown === "output" ? "active" : ""} onClick={() => setTab("output")}>
          {run.status === "error" ? "Error" : "Output"}
        </button>
        <button type="button" role="tab" aria-selected={shown === "logs"} className={shown === "logs" ? "active" : ""} onClick={() => setTab("logs")} data-testid={`logs-tab-${id}`}>
          Logs ({logs.length})
        </button>
      </div>
      {shown === "output" ? (
        main
      ) : (
        <ol className="node-logs nowheel" data-testid={`logs-${id}`}>
          {logs.map((l, i) => (
            <li key={i}>
              {l.name && <strong>{l.name}: </strong>}
              {l.message}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** One colour per type; a field or output with several types shows their colours side by side. */
function handleBackground(types: readonly string[] | null | undefined): string {
  const colours = [...new Set((types ?? []).map((t) => typeColour(primaryType([t]))))];
  if (colours.length <= 1) return colours[0] ?? typeColour(undefined);
  const step = 100 / colours.length;
  return `conic-gradient(${colours.map((c, i) => `${c} ${i * step}% ${(i + 1) * step}%`).join(", ")})`;
}

/** A node's name or description: double-click (or focus and Enter) to edit; Enter saves, Escape cancels. */
function InlineEdit(props: {
  value: string;
  label: string;
  className: string;
  testId: string;
  multiline?: boolean;
  /** shown (on a selected node) when there is no value yet */
  placeholder?: string;
  onSave: (v: string) => void;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  if (draft === null)
    return props.multiline && !props.value && !props.placeholder ? null : (
      <span
        className={`${props.className}${props.value ? "" : " inline-placeholder"}`}
        title={`${props.value}\n(double-click to edit)`}
        data-testid={props.testId}
        tabIndex={0}
        onDoubleClick={() => setDraft(props.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" || e.key === "F2") {
            e.preventDefault();
            setDraft(props.value);
          }
        }}
      >
        {props.value || props.placeholder}
      </span>
    );
  const done = (save: boolean) => {
    if (save && draft.trim() !== props.value) props.onSave(draft.trim());
    setDraft(null);
  };
  const common = {
    className: `${props.className} inline-edit nodrag`,
    "aria-label": props.label,
    value: draft,
    autoFocus: true,
    onBlur: () => done(true),
    onKeyDown: (e: React.KeyboardEvent) => {
      if (e.key === "Enter" && !e.shiftKey) (e.preventDefault(), done(true));
      else if (e.key === "Escape") (e.stopPropagation(), done(false));
    },
  };
  return props.multiline ? (
    <textarea {...common} rows={2} onChange={(e) => setDraft(e.target.value)} />
  ) : (
    <input {...common} onChange={(e) => setDraft(e.target.value)} />
  );
}

function hintClass(hint: "compatible" | "dimmed" | null): string {
  return hint ? ` handle-${hint}` : "";
}

export const GenericNode = memo(function GenericNode({ id, data, selected }: NodeProps) {
  const d = data as unknown as GenericNodeData;
  const node = d.node;
  const ed = useEditor();
  const run = useNodeRun(id);
  const [showAdvanced, setShowAdvanced] = useState(false);
  const connected = useConnectedFields(id);
  const drag = useDragOrigin();
  const fields = useMemo(() => templateFields(node).filter(([n, f]) => f.show !== false && n !== "tools_metadata"), [node]);
  const canTool = supportsToolMode(node);
  const toolMode = isToolMode(node);
  const agentFills = useMemo(() => (toolMode ? toolArgumentFields(node) : new Set<string>()), [toolMode, node]);
  const advancedCount = fields.filter(([, f]) => f.advanced).length;
  const outputs = visibleOutputs(node);
  const name = node.display_name || d.type;
  const status = run?.status;
  const blockedTypes = useSession().config.blocked_component_types;
  const blocked = Array.isArray(blockedTypes) && blockedTypes.includes(d.type);

  return (
    <>
    <NodeActions id={id} />
    <div
      className={`gnode${selected ? " selected" : ""}${status ? ` run-${status}` : ""}${blocked ? " gnode-blocked" : ""}`}
      data-testid={`node-${d.type}`}
      aria-label={`${name} component`}
    >
      <div className="gnode-head">
        <span className="gnode-icon" aria-hidden data-category={categoryOf(d.type) ?? "other"}>
          <Icon name={categoryIcon(categoryOf(d.type))} size={14} />
        </span>
        <InlineEdit
          value={name}
          label={`Name of ${name}`}
          className="gnode-title"
          testId={`title-${id}`}
          onSave={(v) => ed.setNodeData(id, { node: { ...node, display_name: v || d.type } })}
        />
        <StatusBadge id={id} />
        <button
          type="button"
          className="icon-btn nodrag run-btn"
          title="Run the flow up to this component"
          aria-label={`Run up to ${name}`}
          onClick={() => ed.runUpTo(id)}
        >
          <Icon name="play" size={12} />
        </button>
      </div>
      {blocked && (
        <div className="node-error" role="note" data-testid={`blocked-${id}`}>
          Blocked by the catalog policy: this flow cannot run until an admin unblocks it.
        </div>
      )}
      <InlineEdit
        value={node.description ?? ""}
        label={`Description of ${name}`}
        className="gnode-desc"
        testId={`desc-${id}`}
        placeholder={selected ? "Add a description (double-click)" : undefined}
        multiline
        onSave={(v) => ed.setNodeData(id, { node: { ...node, description: v } })}
      />
      {canTool && (selected || toolMode) && (
        <div className="gnode-toolmode nodrag">
          <label className="nf-bool" title="Use this component as a tool of an Agent">
            <input type="checkbox" role="switch" aria-checked={toolMode} aria-label={`Tool Mode of ${name}`} checked={toolMode} onChange={(e) => ed.setToolMode(id, e.target.checked)} />
            <span className="switch" aria-hidden />
            <span>Tool Mode</span>
          </label>
          {toolMode && (
            <button type="button" className="btn btn-small" onClick={() => ed.openActions(id)} data-testid={`actions-${id}`}>
              Actions ({toolActions(node).filter((a) => a.status !== false).length}/{toolActions(node).length})
            </button>
          )}
        </div>
      )}
      <div className="gnode-fields">
        {fields
          .filter(([, f]) => showAdvanced || !f.advanced)
          .map(([fname, f]) => {
            if (agentFills.has(fname))
              return (
                <div className="gfield" key={fname}>
                  <span className="gfield-label">{f.display_name || fname}</span>
                  <span className="connected-note">Filled by the agent</span>
                </div>
              );
            const hasHandle = fieldHasHandle(f);
            const th: TargetHandle | null = hasHandle ? { fieldName: fname, id, inputTypes: f.input_types ?? null, type: f.type } : null;
            const colour = handleBackground(f.input_types);
            return (
              <div className="gfield" key={fname}>
                {th && (
                  <Handle
                    type="target"
                    position={Position.Left}
                    id={encodeHandle(th)}
                    className={`handle${hintClass(handleHint(drag, id, "target", f.input_types))}`}
                    data-testid={`handle-in-${fname}`}
                    style={{ background: colour }}
                    title={`Accepts ${(f.input_types ?? []).join(", ")}`}
                  />
                )}
                <label className="gfield-label" htmlFor={`f-${id}-${fname}`} title={f.info || undefined}>
                  {f.display_name || fname}
                  {f.required && <span className="req" aria-label="required"> *</span>}
                  {th && f.type === "other" && <span className="muted small"> {(f.input_types ?? []).join(" | ")}</span>}
                </label>
                {connected.has(fname) ? (
                  <span className="connected-note">Connected</span>
                ) : (
                  <FieldInput nodeId={id} componentKey={d.type} name={fname} field={f} node={node} />
                )}
              </div>
            );
          })}
        {advancedCount > 0 && (
          <button type="button" className="btn btn-link btn-small nodrag adv-toggle" onClick={() => setShowAdvanced((v) => !v)} aria-expanded={showAdvanced}>
            {showAdvanced ? "Hide advanced" : `Show advanced (${advancedCount})`}
          </button>
        )}
      </div>
      {outputs.length > 0 && (
        <div className="gnode-outputs">
          {outputs.map((o) => {
            const types = o.selected && o.types.includes(o.selected) ? [o.selected] : o.types;
            const sh: SourceHandle = { dataType: d.type, id, name: o.name, output_types: types };
            return (
              <div className="goutput" key={o.name}>
                <span>
                  {o.display_name || o.name} <span className="muted small">{types.join(" | ")}</span>
                </span>
                <Handle
                  type="source"
                  position={Position.Right}
                  id={encodeHandle(sh)}
                  className={`handle${hintClass(handleHint(drag, id, "source", types))}`}
                  data-testid={`handle-out-${o.name}`}
                  style={{ background: handleBackground(types) }}
                  title={`Output: ${types.join(", ")}`}
                />
              </div>
            );
          })}
        </div>
      )}
      <RunOutput id={id} />
    </div>
    </>
  );
});

/** Shown above a selected node: the mouse path to what Ctrl+D and Delete do. */
function NodeActions({ id }: { id: string }) {
  const ed = useEditor();
  return (
    <NodeToolbar position={Position.Top} className="node-toolbar">
      <button type="button" className="btn btn-small" onClick={() => ed.duplicateNode(id)} title="Duplicate (Ctrl+D)">
        Duplicate
      </button>
      <button type="button" className="btn btn-small btn-danger-text" onClick={() => ed.deleteNode(id)} title="Delete (Delete key)">
        <Icon name="trash" size={12} /> Delete
      </button>
    </NodeToolbar>
  );
}

export const NoteNode = memo(function NoteNode({ id, data, selected }: NodeProps) {
  const d = data as unknown as GenericNodeData;
  const ed = useEditor();
  const text = String(d.node?.description ?? "");
  const [draft, setDraft] = useState<string | null>(null);
  const [editing, setEditing] = useState(!text);
  const commit = () => {
    if (draft !== null && draft !== text) ed.setNodeData(id, { node: { ...d.node, description: draft } });
    setDraft(null);
    if ((draft ?? text).trim()) setEditing(false);
  };
  return (
    <>
    <NodeActions id={id} />
    <NodeResizer minWidth={200} minHeight={100} isVisible={!!selected} />
    <div className={`note${selected ? " selected" : ""}`} data-testid="note-node" onDoubleClick={() => setEditing(true)}>
      {editing ? (
        <textarea
          className="nodrag nowheel"
          aria-label="Note"
          placeholder="Write a note… (Markdown: # heading, **bold**, - list, [link](https://…))"
          value={draft ?? text}
          autoFocus={!!text}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => {
            if (e.key === "Escape") (e.currentTarget as HTMLTextAreaElement).blur();
          }}
        />
      ) : (
        <>
          <div className="note-md nowheel" data-testid="note-text" aria-label="Note" role="note">
            <Markdown text={text} />
          </div>
          {selected && (
            <button type="button" className="btn btn-small note-edit nodrag" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
        </>
      )}
    </div>
    </>
  );
});
