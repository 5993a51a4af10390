// Prompt templates: every `{name}` placeholder becomes an input field of the node (connectable text).
import { isTemplateField } from "./flow";
import type { FlowNode, TemplateField } from "./types";

/** Placeholder names of a template, in order; `{{literal}}` braces are not placeholders. */
export function promptVariables(template: string): string[] {
  const out: string[] = [];
  const re = /\{\{|\}\}|\{([^{}\s]+)\}/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(template))) {
    const name = m[1];
    if (name && /^[A-Za-z_][\w-]*$/.test(name) && !out.includes(name)) out.push(name);
  }
  return out;
}

/** A text field (MessageTextInput) the editor adds to a node: a prompt's variable, an MCP tool's argument. */
export function messageTextField(name: string, extra: Partial<TemplateField> & Record<string, unknown>): TemplateField {
  return { name, display_name: name, type: "str", _input_type: "MessageTextInput", value: "", show: true, advanced: false, input_types: ["Message"], ...extra };
}

function variableField(name: string): TemplateField {
  return messageTextField(name, {
    required: false,
    dynamic: false,
    multiline: true,
    list: false,
    placeholder: "",
    info: "",
    load_from_db: false,
    password: false,
  });
}

/** Add fields for new placeholders of `field`, drop the ones it no longer mentions. */
export function syncPromptFields(n: FlowNode, field: string): FlowNode {
  const tf = n.data.node.template[field];
  if (!isTemplateField(tf)) return n;
  const vars = promptVariables(String(tf.value ?? ""));
  const custom = { ...((n.data.node.custom_fields as Record<string, string[]> | undefined) ?? {}) };
  const previous = custom[field] ?? [];
  const template = { ...n.data.node.template };
  for (const old of previous) if (!vars.includes(old) && old !== field) delete template[old];
  for (const v of vars) if (!(v in template)) template[v] = variableField(v);
  custom[field] = vars;
  const order = (n.data.node.field_order ?? []).filter((f) => f in template);
  for (const v of vars) if (!order.includes(v)) order.push(v);
  return { ...n, data: { ...n.data, node: { ...n.data.node, template, custom_fields: custom, field_order: order } } };
}
