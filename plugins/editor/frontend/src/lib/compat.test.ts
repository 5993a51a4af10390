import { describe, expect, it } from "vitest";
import { canonicalType, fieldHasHandle, handleHint, typeColour, typesCompatible } from "./compat";

describe("type compatibility", () => {
  it("accepts an output type listed by the field", () => {
    expect(typesCompatible(["Message"], ["Message"])).toBe(true);
    expect(typesCompatible(["Message"], ["Data", "JSON", "Message"])).toBe(true);
  });
  it("rejects disjoint types", () => {
    expect(typesCompatible(["Message"], ["DataFrame", "Table"])).toBe(false);
    expect(typesCompatible(["JSON"], ["Message"])).toBe(false);
  });
  it("treats Data as JSON and DataFrame as Table, both ways", () => {
    expect(typesCompatible(["Data"], ["JSON"])).toBe(true);
    expect(typesCompatible(["JSON"], ["Data"])).toBe(true);
    expect(typesCompatible(["DataFrame"], ["Table"])).toBe(true);
    expect(typesCompatible(["Table"], ["DataFrame"])).toBe(true);
    expect(typesCompatible(["Table"], ["Data"])).toBe(false);
  });
  it("needs types on both sides", () => {
    expect(typesCompatible([], ["Message"])).toBe(false);
    expect(typesCompatible(["Message"], null)).toBe(false);
    expect(typesCompatible(undefined, [])).toBe(false);
  });
  it("any overlapping type of a multi-type output is enough", () => {
    expect(typesCompatible(["Message", "Data"], ["JSON"])).toBe(true);
  });
  it("canonicalises aliases and colours them alike", () => {
    expect(canonicalType("Data")).toBe("JSON");
    expect(canonicalType("DataFrame")).toBe("Table");
    expect(canonicalType("Message")).toBe("Message");
    expect(typeColour("Data")).toBe(typeColour("JSON"));
    expect(typeColour("DataFrame")).toBe(typeColour("Table"));
    expect(typeColour("Message")).not.toBe(typeColour("JSON"));
    expect(typeColour("SomethingNew")).toBe(typeColour("SomethingNew"));
  });
  it("gives a handle only to fields with input types", () => {
    expect(fieldHasHandle({ type: "str", input_types: ["Message"] })).toBe(true);
    expect(fieldHasHandle({ type: "str", input_types: [] })).toBe(false);
    expect(fieldHasHandle({ type: "bool" })).toBe(false);
  });
});

describe("handleHint (live feedback while dragging a connection)", () => {
  const fromMessage = { nodeId: "A", handleType: "source" as const, types: ["Message"] };
  it("is null when nothing is dragged", () => {
    expect(handleHint(null, "B", "target", ["Message"])).toBeNull();
  });
  it("highlights fields that accept the dragged output, with the engine's aliases", () => {
    expect(handleHint(fromMessage, "B", "target", ["Message", "JSON"])).toBe("compatible");
    expect(handleHint({ ...fromMessage, types: ["Data"] }, "B", "target", ["JSON"])).toBe("compatible");
    expect(handleHint({ ...fromMessage, types: ["DataFrame/Table"] }, "B", "target", ["DataFrame"])).toBe("compatible");
  });
  it("dims fields that refuse it, the origin node's own handles and other outputs", () => {
    expect(handleHint(fromMessage, "B", "target", ["Data", "JSON"])).toBe("dimmed");
    expect(handleHint(fromMessage, "A", "target", ["Message"])).toBe("dimmed");
    expect(handleHint(fromMessage, "B", "source", ["Message"])).toBe("dimmed");
  });
  it("works from a field towards the outputs too", () => {
    const fromField = { nodeId: "B", handleType: "target" as const, types: ["Tool"] };
    expect(handleHint(fromField, "C", "source", ["Tool"])).toBe("compatible");
    expect(handleHint(fromField, "C", "source", ["Message"])).toBe("dimmed");
  });
});
