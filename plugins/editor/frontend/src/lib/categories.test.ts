import { describe, expect, it } from "vitest";
import { catalogCategories, categoryLabel } from "../editor/Sidebar";
import { categoryIcon } from "./categories";
import type { Catalog } from "./types";

describe("the LLM operations category", () => {
  it("has its own label and icon, and sorts after Models & agents", () => {
    expect(categoryLabel("llm_operations")).toBe("LLM operations");
    expect(categoryIcon("llm_operations")).toBe("chip");
    const node = { template: {}, display_name: "x" };
    const catalog = {
      utilities: { A: node },
      llm_operations: { StructuredOutput: node },
      models_and_agents: { Agent: node },
    } as unknown as Catalog;
    expect(catalogCategories(catalog).map(([c]) => c)).toEqual(["models_and_agents", "llm_operations", "utilities"]);
  });
});
