// Tool Mode: a component whose outputs can be tools (`tool_mode` on an output, the engine's rule in
// core/engine/tools.py) turns into one "Toolset" output (`component_as_tool`, type Tool) that an Agent's
// `tools` field takes. Its `tool_mode` fields become the tool's arguments (the agent fills them), and the
// `tools_metadata` rows (the reference's "Actions") rename, describe, disable or put an action under approval.
import { refreshNode } from "./dynamic";
import { deepClone, isTemplateField } from "./flow";
import type { FlowNode, FrontendNode, NodeOutput, TemplateField } from "./types";

export const TOOLSET_OUTPUT = "component_as_tool";

export interface ToolAction {
  name: string;
  display_name?: string;
  description: string;
  tags: string[];
  status: boolean;
  approval_actions?: string[];
  [key: string]: unknown;
}

/** A function name providers accept: what core.engine.tools.tool_name makes of a method name. */
export function toolName(text: string): string {
  return (text.replace(/[^a-zA-Z0-9_-]+/g, "_").replace(/^_+|_+$/g, "") || "tool").slice(0, 64);
}

export function isToolMode(node: FrontendNode): boolean {
  return node.tool_mode === true;
}

/** Whether the component can be a tool: one of its outputs can (or it is one already). */
export function supportsToolMode(node: FrontendNode): boolean {
  return isToolMode(node) || (node.outputs ?? []).some((o) => o.tool_mode === true);
}

/** The fields the agent fills when the node is a tool. */
export function toolArgumentFields(node: FrontendNode): Set<string> {
  const out = new Set<string>();
  for (const [name, f] of Object.entries(node.template)) if (isTemplateField(f) && f.tool_mode === true) out.add(name);
  return out;
}

export function toolActions(node: FrontendNode): ToolAction[] {
  const f = node.template.tools_metadata;
  return isTemplateField(f) && Array.isArray(f.value) ? (f.value as ToolAction[]) : [];
}

function toolset(): NodeOutput {
  return {
    name: TOOLSET_OUTPUT,
    display_name: "Toolset",
    method: "to_toolkit",
    types: ["Tool"],
    selected: "Tool",
    tool_mode: true,
    cache: true,
    allows_loop: false,
    group_outputs: false,
    value: "__UNDEFINED__",
  };
}

function metadataField(rows: ToolAction[]): TemplateField {
  return {
    _input_type: "ToolsInput",
    name: "tools_metadata",
    display_name: "Actions",
    type: "tools",
    value: rows,
    show: true,
    advanced: false,
    required: false,
    list: false,
    real_time_refresh: true,
    info: "Modify tool names and descriptions to help agents understand when to use each tool.",
  };
}

/** One action per output that can be a tool, as the engine names it (its method). */
export function defaultActions(node: FrontendNode): ToolAction[] {
  return (node.outputs ?? [])
    .filter((o) => o.tool_mode === true && o.name !== TOOLSET_OUTPUT)
    .map((o) => {
      const name = toolName(String(o.method ?? o.name));
      return { name, display_name: o.display_name ?? name, description: String(node.description ?? o.display_name ?? ""), tags: [name], status: true };
    });
}

/** Turn Tool Mode on or off. Off restores the outputs of the catalog entry (then the dynamic rules). */
export function setToolMode(n: FlowNode, on: boolean, catalogEntry: FrontendNode | null): FlowNode {
  const node = n.data.node;
  if (on === isToolMode(node)) return n;
  if (on) {
    const rows = toolActions(node).length ? toolActions(node) : defaultActions(node);
    const template = { ...node.template, tools_metadata: metadataField(rows) };
    return { ...n, data: { ...n.data, node: { ...node, tool_mode: true, outputs: [toolset()], template } } };
  }
  const template = { ...node.template };
  delete template.tools_metadata;
  const outputs = deepClone(catalogEntry?.outputs ?? []).filter((o) => o.name !== TOOLSET_OUTPUT);
  return refreshNode({ ...n, data: { ...n.data, node: { ...node, tool_mode: false, outputs, template } } });
}

/** Replace the actions (the actions table's Save). */
export function withActions(n: FlowNode, rows: ToolAction[]): FlowNode {
  const template = { ...n.data.node.template, tools_metadata: metadataField(rows) };
  return { ...n, data: { ...n.data, node: { ...n.data.node, template } } };
}
