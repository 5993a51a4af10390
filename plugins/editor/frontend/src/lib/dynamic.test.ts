import { describe, expect, it } from "vitest";
import catalog from "./__fixtures__/catalog.json";
import dataOps from "./__fixtures__/data-operations-uppercase.json";
import { applyDynamicRules, operationOptionsFor, operationOutputs, refreshNode, selectedOperation } from "./dynamic";
import { createNode, setFieldValue } from "./flow";
import { promptVariables, syncPromptFields } from "./prompt";
import type { FlowData, FrontendNode, TemplateField } from "./types";

const cat = catalog as unknown as Record<string, Record<string, FrontendNode>>;
const field = (n: FrontendNode, name: string) => n.template[name] as TemplateField;

describe("Data Operations fields follow the chosen operation", () => {
  it("Case Conversion shows case_type; the value then survives the runtime rule", () => {
    let n = createNode("Operations", cat.processing.Operations, { x: 0, y: 0 });
    expect(field(n.data.node, "case_type").show).toBe(false);
    n = refreshNode(setFieldValue(n, "operation", { value: [{ name: "Case Conversion", icon: "type" }] }), "operation");
    expect(field(n.data.node, "case_type").show).toBe(true);
    n = refreshNode(setFieldValue(n, "case_type", { value: "uppercase" }), "case_type");
    expect(field(n.data.node, "case_type")).toMatchObject({ show: true, value: "uppercase" });
    expect(n.data.node.outputs!.map((o) => o.name)).toEqual(["message_output"]);
  });
  it("matches the shown fields of the reference export", () => {
    const ref = (dataOps.data as unknown as FlowData).nodes.find((x) => x.data.type === "Operations")!;
    const shown = (node: FrontendNode) => Object.entries(node.template).filter(([k, f]) => k !== "_type" && typeof f === "object" && (f as TemplateField).show).map(([k]) => k).sort();
    const derived = applyDynamicRules("Operations", ref.data.node);
    expect(shown(derived)).toEqual(shown(ref.data.node));
  });
  it("switching operation hides the previous parameters and changes the output", () => {
    let n = createNode("Operations", cat.processing.Operations, { x: 0, y: 0 });
    n = refreshNode(setFieldValue(n, "operation", { value: [{ name: "Text Replace" }] }), "operation");
    expect(["search_pattern", "replacement_text", "use_regex"].every((k) => field(n.data.node, k).show)).toBe(true);
    n = refreshNode(setFieldValue(n, "operation", { value: [{ name: "Word Count" }] }), "operation");
    expect(field(n.data.node, "search_pattern").show).toBe(false);
    expect(field(n.data.node, "count_words").show).toBe(true);
    expect(n.data.node.outputs!.map((o) => [o.name, o.types])).toEqual([["data_output", ["JSON"]]]);
  });
  it("input type picks the input field and the operation list", () => {
    let n = createNode("Operations", cat.processing.Operations, { x: 0, y: 0 });
    n = refreshNode(setFieldValue(n, "operation", { value: [{ name: "Case Conversion" }] }), "operation");
    n = refreshNode(setFieldValue(n, "input_type", { value: "Table" }), "input_type");
    expect(field(n.data.node, "text_input").show).toBe(false);
    expect(field(n.data.node, "df").show).toBe(true);
    expect(field(n.data.node, "operation").value).toEqual([]); // Case Conversion is not a Table operation
    const names = operationOptionsFor("Operations", n.data.node, []).map(selectedOperation);
    expect(names).toContain("Filter");
    expect(names).not.toContain("Case Conversion");
    expect(operationOutputs("Filter")).toEqual(["dataframe_output"]);
    expect(operationOutputs("Text Join")).toEqual(["text_output", "message_output"]);
  });
  it("Type Convert shows the output of the chosen type; Parser hides the pattern in Stringify mode", () => {
    let t = createNode("TypeConverterComponent", cat.processing.TypeConverterComponent, { x: 0, y: 0 });
    t = refreshNode(setFieldValue(t, "output_type", { value: "Table" }), "output_type");
    expect(t.data.node.outputs!.map((o) => o.name)).toEqual(["dataframe_output"]);
    let p = createNode("ParserComponent", cat.processing.ParserComponent, { x: 0, y: 0 });
    p = refreshNode(setFieldValue(p, "mode", { value: "Stringify" }), "mode");
    expect(field(p.data.node, "pattern").show).toBe(false);
  });
  it("other components are left alone", () => {
    const n = createNode("ChatInput", cat.input_output.ChatInput, { x: 0, y: 0 });
    expect(refreshNode(n, "input_value")).toBe(n);
  });
});

describe("prompt templates", () => {
  it("find {placeholders} but not {{literals}}", () => {
    expect(promptVariables("Hi {name}, {{not}} {topic} {name}")).toEqual(["name", "topic"]);
    expect(promptVariables("no vars")).toEqual([]);
  });
  it("add and remove input fields as the template changes", () => {
    const key = Object.keys(cat.models_and_agents)[0];
    const base = cat.models_and_agents[key];
    const tfield = Object.entries(base.template).find(([, f]) => typeof f === "object" && (f as TemplateField).type === "prompt")![0];
    let n = createNode(key, base, { x: 0, y: 0 });
    n = syncPromptFields(setFieldValue(n, tfield, { value: "About {topic} for {audience}" }), tfield);
    expect(field(n.data.node, "topic")).toMatchObject({ input_types: ["Message"], show: true });
    expect(field(n.data.node, "audience")).toBeDefined();
    n = syncPromptFields(setFieldValue(n, tfield, { value: "About {topic}" }), tfield);
    expect(n.data.node.template.audience).toBeUndefined();
    expect(n.data.node.template.topic).toBeDefined();
  });
});
