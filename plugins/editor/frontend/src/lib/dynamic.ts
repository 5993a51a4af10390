// Fields and outputs that depend on another field's value (the reference does this server-side through
// POST /api/v1/custom_component/update, which this service does not offer). Fields with show:false are ignored
// at run time, so showing the parameters of the chosen operation is what makes them take effect.
import { isTemplateField } from "./flow";
import type { FlowNode, FrontendNode, NodeOutput, TemplateField } from "./types";

export const OPERATION_FIELDS: Record<string, string[]> = {
  "Word Count": ["count_words", "count_characters", "count_lines"],
  "Case Conversion": ["case_type"],
  "Text Replace": ["search_pattern", "replacement_text", "use_regex"],
  "Text Extract": ["extract_pattern", "max_matches"],
  "Text Head": ["head_characters"],
  "Text Tail": ["tail_characters"],
  "Text Strip": ["strip_mode", "strip_characters"],
  "Text Join": ["text_input_2"],
  "Text Clean": ["remove_extra_spaces", "remove_special_chars", "remove_empty_lines"],
  "Text to DataFrame": ["table_separator", "has_header"],
  "Select Keys": ["select_keys_input"],
  "Literal Eval": [],
  Combine: [],
  "Append or Update": ["append_update_data"],
  "Remove Keys": ["remove_keys_input"],
  "Rename Keys": ["rename_keys_input"],
  "Path Selection": ["mapped_json_display", "selected_key"],
  "JQ Expression": ["query"],
  "Add Column": ["new_column_name", "new_column_value"],
  Concatenate: [],
  "Drop Column": ["column_name"],
  Filter: ["column_name", "filter_value", "filter_operator"],
  Head: ["num_rows"],
  Merge: ["left_dataframe", "right_dataframe", "merge_on_column", "merge_how"],
  "Rename Column": ["column_name", "new_column_name"],
  "Replace Value": ["column_name", "replace_value", "replacement_value"],
  "Select Columns": ["columns_to_select"],
  Sort: ["column_name", "ascending"],
  Tail: ["num_rows"],
  "Drop Duplicates": ["column_name"],
};

const ALL_OPERATION_FIELDS = new Set(Object.values(OPERATION_FIELDS).flat());

const TEXT_OPS = ["Word Count", "Case Conversion", "Text Replace", "Text Extract", "Text Head", "Text Tail", "Text Strip", "Text Join", "Text Clean", "Text to DataFrame"];
const JSON_OPS = ["Select Keys", "Literal Eval", "Combine", "Append or Update", "Remove Keys", "Rename Keys", "Path Selection", "JQ Expression"];

const OUTPUTS: Record<string, NodeOutput> = {
  message_output: { name: "message_output", display_name: "Message", method: "as_message", types: ["Message"], selected: "Message", cache: true, allows_loop: false, group_outputs: false, tool_mode: true, value: "__UNDEFINED__" },
  data_output: { name: "data_output", display_name: "JSON", method: "as_data", types: ["JSON"], selected: "JSON", cache: true, allows_loop: false, group_outputs: false, tool_mode: true, value: "__UNDEFINED__" },
  dataframe_output: { name: "dataframe_output", display_name: "Table", method: "as_dataframe", types: ["Table"], selected: "Table", cache: true, allows_loop: false, group_outputs: false, tool_mode: true, value: "__UNDEFINED__" },
  text_output: { name: "text_output", display_name: "Text", method: "as_text", types: ["Message"], selected: "Message", cache: true, allows_loop: false, group_outputs: false, tool_mode: true, value: "__UNDEFINED__" },
};

export function operationOutputs(op: string): string[] {
  if (op === "Text Join") return ["text_output", "message_output"];
  if (op === "Word Count" || JSON_OPS.includes(op)) return ["data_output"];
  if (op === "Text to DataFrame" || (op && !TEXT_OPS.includes(op))) return ["dataframe_output"];
  return ["message_output"];
}

export function selectedOperation(value: unknown): string {
  let v = value;
  if (Array.isArray(v)) v = v[0];
  if (v && typeof v === "object") v = (v as { name?: unknown }).name;
  return typeof v === "string" ? v : "";
}

function withOutputs(node: FrontendNode, names: string[]): FrontendNode {
  const existing = new Map((node.outputs ?? []).map((o) => [o.name, o]));
  return { ...node, outputs: names.map((n) => existing.get(n) ?? { ...OUTPUTS[n] }) };
}

function setShow(template: FrontendNode["template"], name: string, show: boolean) {
  const f = template[name];
  if (isTemplateField(f) && f.show !== show) template[name] = { ...f, show };
}

function applyOperations(node: FrontendNode, opField: string, handleOutputs: boolean): FrontendNode {
  const template = { ...node.template };
  const op = selectedOperation((template[opField] as TemplateField | undefined)?.value);
  const wanted = new Set(OPERATION_FIELDS[op] ?? []);
  for (const name of ALL_OPERATION_FIELDS) if (name in template) setShow(template, name, wanted.has(name));
  let out: FrontendNode = { ...node, template };
  if (handleOutputs && op) out = withOutputs(out, operationOutputs(op));
  return out;
}

const INPUT_FOR_TYPE: Record<string, string> = { Text: "text_input", JSON: "data", Table: "df" };

/**
 * Re-derive the dynamic parts of a node after `changed` was edited. Returns the new frontend node (or the
 * same object when nothing depends on that field).
 */
export function applyDynamicRules(componentKey: string, node: FrontendNode, changed?: string): FrontendNode {
  const template = node.template;
  switch (componentKey) {
    case "Operations": {
      let n = node;
      if (!changed || changed === "input_type") {
        const t = { ...n.template };
        const kind = String((t.input_type as TemplateField | undefined)?.value ?? "Text");
        for (const [k, field] of Object.entries(INPUT_FOR_TYPE)) setShow(t, field, k === kind);
        const opf = t.operation as TemplateField | undefined;
        if (changed && opf) {
          const allowed = kind === "JSON" ? JSON_OPS : kind === "Table" ? TABLE_OPS : TEXT_OPS;
          if (!allowed.includes(selectedOperation(opf.value))) t.operation = { ...opf, value: [] };
        }
        n = { ...n, template: t };
      }
      if (!changed || changed === "operation" || changed === "input_type") n = applyOperations(n, "operation", true);
      return n;
    }
    case "TextOperations":
      return !changed || changed === "operation" ? applyOperations(node, "operation", true) : node;
    case "DataOperations":
      return !changed || changed === "operations" ? applyOperations(node, "operations", false) : node;
    case "DataFrameOperations":
      return !changed || changed === "operation" ? applyOperations(node, "operation", false) : node;
    case "TypeConverterComponent": {
      if (changed && changed !== "output_type") return node;
      const v = String((template.output_type as TemplateField | undefined)?.value ?? "Message");
      const name = v === "JSON" ? "data_output" : v === "Table" ? "dataframe_output" : "message_output";
      return withOutputs(node, [name]);
    }
    case "ParserComponent": {
      if (changed && changed !== "mode") return node;
      const t = { ...template };
      const stringify = (t.mode as TemplateField | undefined)?.value === "Stringify";
      setShow(t, "pattern", !stringify);
      setShow(t, "clean_data", stringify);
      return { ...node, template: t };
    }
    default:
      return node;
  }
}

/** Apply the rules to a whole flow node (after a field change); returns a new node when anything changed. */
export function refreshNode(n: FlowNode, changed?: string): FlowNode {
  if (n.type !== "genericNode") return n;
  const next = applyDynamicRules(n.data.type, n.data.node, changed);
  return next === n.data.node ? n : { ...n, data: { ...n.data, node: next } };
}

const OP_ICONS: Record<string, string> = {
  "Word Count": "hash", "Case Conversion": "type", "Text Replace": "replace", "Text Extract": "search",
  "Text Head": "chevron-left", "Text Tail": "chevron-right", "Text Strip": "minus", "Text Join": "link",
  "Text Clean": "sparkles", "Text to DataFrame": "table", "Select Keys": "lasso-select", "Literal Eval": "braces",
  Combine: "merge", "Append or Update": "circle-plus", "Remove Keys": "eraser", "Rename Keys": "pencil-line",
  "Path Selection": "mouse-pointer", "JQ Expression": "terminal", "Add Column": "plus", Concatenate: "combine",
  "Drop Column": "minus", Filter: "filter", Head: "arrow-up", Merge: "merge", "Rename Column": "pencil",
  "Replace Value": "replace", "Select Columns": "columns", Sort: "arrow-up-down", Tail: "arrow-down",
  "Drop Duplicates": "copy-x",
};
const TABLE_OPS = Object.keys(OP_ICONS).filter((n) => !TEXT_OPS.includes(n) && !JSON_OPS.includes(n));

/** The sortable-list options for Operations depend on input_type (Text, JSON, Table). */
export function operationOptionsFor(componentKey: string, node: FrontendNode, options: unknown[]): unknown[] {
  if (componentKey !== "Operations") return options;
  const kind = String((node.template.input_type as TemplateField | undefined)?.value ?? "Text");
  const names = kind === "JSON" ? JSON_OPS : kind === "Table" ? TABLE_OPS : TEXT_OPS;
  return names.map((name) => ({ icon: OP_ICONS[name], name }));
}
