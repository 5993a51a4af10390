import { Handle, NodeResizer, NodeToolbar, Position, useStore, type NodeProps } from "@xyflow/react";
import { memo, useMemo, useState } from "react";
import { fieldHasHandle, handleHint, typeColour } from "../lib/compat";
import { encodeHandle, isTemplateField, primaryType, templateFields, visibleOutputs } from "../lib/flow";
import { groupFlow, innerIds, proxyLabel } from "../lib/group";
import { isToolMode, supportsToolMode, toolActions, toolArgumentFields } from "../lib/toolmode";
import type { FlowNode, GenericNodeData, SourceHandle, TargetHandle } from "../lib/types";
import { Icon } from "../components/Icon";
import { categoryIcon, categoryOf } from "../lib/categories";
import { Markdown } from "../lib/markdown";
import { FieldInput } from "./FieldInput";
import { useSession } from "../session";
import { useConnectedFields, useDragOrigin, useEditor, useNodeRun, type EditorActions, type GroupMembers } from "./store";

function StatusBadge({ id, members }: { id: string; members: GroupMembers | null }) {
  const run = useNodeRun(id, members);
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
function RunOutput({ id, members }: { id: string; members: GroupMembers | null }) {
  const run = useNodeRun(id, members);
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

/** below this zoom a node's text is under 3 px tall: it draws as its header and handles */
export const FAR_ZOOM = 0.25;
const farOut = (s: { transform: [number, number, number] }) => s.transform[2] < FAR_ZOOM;

/** A handle a keyboard reaches (Tab) and uses: Enter or Space lists the other ends to connect to. */
function keyHandle(ed: EditorActions, nodeId: string, handleType: "source" | "target", handleId: string, label: string) {
  return {
    tabIndex: 0,
    role: "button",
    "aria-label": label,
    "aria-haspopup": "dialog" as const,
    onKeyDown: (e: React.KeyboardEvent) => {
      if (e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      e.stopPropagation(); // not the node's own Enter (select)
      ed.keyConnect({ nodeId, handleType, handleId });
    },
  };
}

function membersOf(d: GenericNodeData): GroupMembers | null {
  if (d.node?.flow == null) return null;
  const asNode = { id: "", type: "genericNode", position: { x: 0, y: 0 }, data: d } as unknown as FlowNode;
  const g = groupFlow(asNode);
  if (!g) return null;
  const names: Record<string, string> = {};
  const collect = (nodes: FlowNode[]) =>
    nodes.forEach((n) => {
      names[n.id] = String(n.data?.node?.display_name || n.data?.type || n.id);
      const inner = groupFlow(n);
      if (inner) collect(inner.nodes);
    });
  collect(g.nodes);
  return { ids: innerIds(asNode), names };
}

function hintClass(hint: "compatible" | "dimmed" | null): string {
  return hint ? ` handle-${hint}` : "";
}

export const GenericNode = memo(function GenericNode({ id, data, selected }: NodeProps) {
  const d = data as unknown as GenericNodeData;
  const node = d.node;
  const ed = useEditor();
  // a group runs as its inner components: its badge and output follow theirs
  const members = useMemo(() => membersOf(d), [d]);
  const run = useNodeRun(id, members);
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
  const frozen = Boolean(node.frozen);
  // far out (text too small to read), a node draws as its header and handles: a large flow pans and zooms smoothly
  const far = useStore(farOut);
  const minimised = d.showNode === false || (far && !selected);
  const group = node.flow != null;

  return (
    <>
    {/* only a selected node has a toolbar: xyflow's NodeToolbar follows the view, so 300 of them (shown or
        not) re-rendered and allocated on every frame of a pan */}
    {selected && <NodeActions id={id} d={d} />}
    <div
      className={`gnode${selected ? " selected" : ""}${status ? ` run-${status}` : ""}${blocked ? " gnode-blocked" : ""}${frozen ? " gnode-frozen" : ""}${minimised ? " gnode-min" : ""}${group ? " gnode-group" : ""}`}
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
        {group && <span className="badge badge-group" data-testid={`group-badge-${id}`}>Group</span>}
        {frozen && (
          <span className="badge badge-frozen" data-testid={`frozen-${id}`} title="Frozen: reuses its last output">
            Frozen
          </span>
        )}
        <StatusBadge id={id} members={members} />
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
      {!minimised && (
      <InlineEdit
        value={node.description ?? ""}
        label={`Description of ${name}`}
        className="gnode-desc"
        testId={`desc-${id}`}
        placeholder={selected ? "Add a description (double-click)" : undefined}
        multiline
        onSave={(v) => ed.setNodeData(id, { node: { ...node, description: v } })}
      />
      )}
      {canTool && !minimised && (selected || toolMode) && (
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
          .filter(([, f]) => (minimised ? fieldHasHandle(f) : showAdvanced || !f.advanced))
          .map(([fname, f]) => {
            if (agentFills.has(fname))
              return minimised ? null : (
                <div className="gfield" key={fname}>
                  <span className="gfield-label">{f.display_name || fname}</span>
                  <span className="connected-note">Filled by the agent</span>
                </div>
              );
            const hasHandle = fieldHasHandle(f);
            const proxy = f.proxy as TargetHandle["proxy"] | undefined;
            const th: TargetHandle | null = hasHandle ? { fieldName: fname, id, inputTypes: f.input_types ?? null, type: f.type, ...(proxy ? { proxy } : {}) } : null;
            const colour = handleBackground(f.input_types);
            const handle = th && (
              <Handle
                type="target"
                position={Position.Left}
                id={encodeHandle(th)}
                className={`handle${hintClass(handleHint(drag, id, "target", f.input_types))}`}
                data-testid={`handle-in-${fname}`}
                {...keyHandle(ed, id, "target", encodeHandle(th), `Connect input ${f.display_name || fname} of ${name}`)}
                style={{ background: colour }}
                title={`${f.display_name || fname}: accepts ${(f.input_types ?? []).join(", ")}`}
              />
            );
            if (minimised)
              return (
                <div className="gfield gfield-min" key={fname}>
                  {handle}
                </div>
              );
            const inner = group ? proxyLabel(node, f) : null;
            return (
              <div className="gfield" key={fname}>
                {handle}
                <label className="gfield-label" htmlFor={`f-${id}-${fname}`} title={f.info || undefined}>
                  {f.display_name || fname}
                  {f.required && <span className="req" aria-label="required"> *</span>}
                  {inner && <span className="muted small"> · {inner}</span>}
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
        {advancedCount > 0 && !minimised && (
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
              <div className={`goutput${minimised ? " goutput-min" : ""}`} key={o.name}>
                {!minimised && (
                  <span>
                    {o.display_name || o.name} <span className="muted small">{types.join(" | ")}</span>
                    {group && (o.proxy as { nodeDisplayName?: string } | undefined)?.nodeDisplayName && (
                      <span className="muted small"> · {(o.proxy as { nodeDisplayName?: string }).nodeDisplayName}</span>
                    )}
                  </span>
                )}
                <Handle
                  type="source"
                  position={Position.Right}
                  id={encodeHandle(sh)}
                  className={`handle${hintClass(handleHint(drag, id, "source", types))}`}
                  data-testid={`handle-out-${o.name}`}
                  {...keyHandle(ed, id, "source", encodeHandle(sh), `Connect output ${o.display_name || o.name} of ${name}`)}
                  style={{ background: handleBackground(types) }}
                  title={`Output ${o.display_name || o.name}: ${types.join(", ")}`}
                />
              </div>
            );
          })}
        </div>
      )}
      {!minimised && <RunOutput id={id} members={members} />}
    </div>
    </>
  );
});

/**
 * Shown above a selected node (the reference's node toolbar): code (read-only), controls (which fields show on the
 * node), freeze, minimise, docs, ungroup (a group), duplicate and delete.
 */
function NodeActions({ id, d }: { id: string; d?: GenericNodeData }) {
  const ed = useEditor();
  const node = d?.node;
  const name = node ? String(node.display_name || d!.type) : "note";
  const code = node && isTemplateField(node.template.code) && typeof node.template.code.value === "string" ? node.template.code.value : "";
  const frozen = Boolean(node?.frozen);
  const minimised = d?.showNode === false;
  const docs = typeof node?.documentation === "string" && /^https?:\/\//.test(node.documentation) ? node.documentation : "";
  return (
    <NodeToolbar position={Position.Top} className="node-toolbar" aria-label={`Actions of ${name}`}>
      {node && (
        <>
          {code && (
            <button type="button" className="btn btn-small" onClick={() => ed.openNodeDialog("code", id)} title="Show the component's code (read-only)">
              Code
            </button>
          )}
          <button type="button" className="btn btn-small" onClick={() => ed.openNodeDialog("controls", id)} title="Choose which fields show on the node">
            Controls
          </button>
          <button
            type="button"
            className={`btn btn-small${frozen ? " active" : ""}`}
            aria-pressed={frozen}
            onClick={() => ed.setNodeData(id, { node: { ...node, frozen: !frozen } })}
            title="A frozen component reuses its last output while its inputs stay the same"
          >
            {frozen ? "Unfreeze" : "Freeze"}
          </button>
          <button type="button" className="btn btn-small" aria-pressed={minimised} onClick={() => ed.setNodeData(id, { showNode: minimised })} title={minimised ? "Show the fields" : "Show only the header"}>
            {minimised ? "Expand" : "Minimise"}
          </button>
          {docs && (
            <a className="btn btn-small" href={docs} target="_blank" rel="noopener noreferrer" title="The component's documentation (new tab)">
              Docs
            </a>
          )}
          {node.flow != null && (
            <button type="button" className="btn btn-small" onClick={() => ed.ungroup(id)} title="Put the group's components back on the canvas (Ctrl+Shift+G)">
              Ungroup
            </button>
          )}
        </>
      )}
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
    {selected && <NodeActions id={id} />}
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
