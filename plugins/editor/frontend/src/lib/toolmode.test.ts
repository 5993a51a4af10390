import { describe, expect, it } from "vitest";
import { defaultActions, setToolMode, supportsToolMode, TOOLSET_OUTPUT, toolActions, toolArgumentFields, toolName, withActions } from "./toolmode";
import type { FlowNode, FrontendNode } from "./types";

const calculator: FrontendNode = {
  description: "Evaluate an arithmetic expression.",
  template: { expression: { type: "str", value: "", tool_mode: true }, other: { type: "str", value: "" } },
  outputs: [{ name: "result", display_name: "Result", method: "evaluate_expression", types: ["JSON"], tool_mode: true }],
};

const flowNode = (node: FrontendNode): FlowNode => ({ id: "Calc-1", type: "genericNode", position: { x: 0, y: 0 }, data: { id: "Calc-1", type: "CalculatorComponent", node } });

describe("tool mode", () => {
  it("names actions like the engine (core.engine.tools.tool_name)", () => {
    expect(toolName("evaluate_expression")).toBe("evaluate_expression");
    expect(toolName("build prompt!")).toBe("build_prompt");
    expect(toolName("***")).toBe("tool");
  });

  it("is offered when an output can be a tool", () => {
    expect(supportsToolMode(calculator)).toBe(true);
    expect(supportsToolMode({ template: {}, outputs: [{ name: "x", types: ["Message"] }] })).toBe(false);
    expect([...toolArgumentFields(calculator)]).toEqual(["expression"]);
  });

  it("on: one Toolset output and one action per tool output; off: the catalog's outputs back", () => {
    const on = setToolMode(flowNode(calculator), true, calculator);
    expect(on.data.node.tool_mode).toBe(true);
    expect(on.data.node.outputs?.map((o) => [o.name, o.types])).toEqual([[TOOLSET_OUTPUT, ["Tool"]]]);
    expect(toolActions(on.data.node)).toEqual(defaultActions(calculator));
    expect(toolActions(on.data.node)[0]).toMatchObject({ name: "evaluate_expression", tags: ["evaluate_expression"], status: true });
    const off = setToolMode(on, false, calculator);
    expect(off.data.node.tool_mode).toBe(false);
    expect(off.data.node.outputs).toEqual(calculator.outputs);
    expect(off.data.node.template.tools_metadata).toBeUndefined();
  });

  it("keeps edited actions", () => {
    const on = setToolMode(flowNode(calculator), true, calculator);
    const edited = withActions(on, [{ ...toolActions(on.data.node)[0], status: false, approval_actions: ["approve", "reject"] }]);
    expect(toolActions(edited.data.node)[0]).toMatchObject({ status: false, approval_actions: ["approve", "reject"] });
    expect(setToolMode(edited, true, calculator)).toBe(edited);
  });
});
