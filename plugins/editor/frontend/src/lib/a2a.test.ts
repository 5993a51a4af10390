import { describe, expect, it } from "vitest";
import { parseOverrides } from "./a2a";

describe("agent card overrides text", () => {
  it("is empty: no overrides", () => {
    expect(parseOverrides("  ")).toEqual({ value: null });
    expect(parseOverrides("null")).toEqual({ value: null });
  });
  it("parses an object as it is (the server checks the members)", () => {
    expect(parseOverrides('{"name": "Parrot", "tags": "x"}')).toEqual({ value: { name: "Parrot", tags: "x" } });
  });
  it("refuses what is not a JSON object", () => {
    expect(parseOverrides('{"name": ')).toHaveProperty("error", expect.stringMatching(/^Not valid JSON/));
    expect(parseOverrides("[1]")).toEqual({ error: "The overrides must be a JSON object." });
    expect(parseOverrides('"x"')).toEqual({ error: "The overrides must be a JSON object." });
  });
});
