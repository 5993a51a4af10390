// Which catalog category each component key belongs to (for the node icons); filled when the catalog loads.
const byKey = new Map<string, string>();

export function indexCategories(entries: [string, [string, unknown][]][]): void {
  byKey.clear();
  for (const [cat, items] of entries) for (const [key] of items) byKey.set(key, cat);
}

export function categoryOf(key: string): string | undefined {
  return byKey.get(key);
}

/** The icon of a category (see components/Icon.tsx). */
export function categoryIcon(category: string | undefined): string {
  switch (category) {
    case "input_output":
      return "chat";
    case "data_source":
      return "database";
    case "processing":
      return "sliders";
    case "flow_controls":
      return "branch";
    case "models_and_agents":
    case "llm_operations":
      return "chip";
    case "utilities":
      return "wrench";
    case "files_and_knowledge":
      return "file";
    case "tools":
      return "hammer";
    case "agents":
      return "bot";
    case "embeddings":
      return "vector";
    default:
      return "box";
  }
}
