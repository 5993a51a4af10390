// Type compatibility and handle colours. Aliases: Data = JSON, DataFrame = Table.
import type { TemplateField } from "./types";

// the same aliases the engine uses when it checks an edge (core/engine/graph.py normalise_type)
const ALIASES: Record<string, string> = { Data: "JSON", DataFrame: "Table", "Data/JSON": "JSON", "DataFrame/Table": "Table" };

export function canonicalType(t: string): string {
  return ALIASES[t] ?? t;
}

/** True when one of the output types is accepted by the target field's input types. */
export function typesCompatible(outputTypes: readonly string[] | null | undefined, inputTypes: readonly string[] | null | undefined): boolean {
  if (!outputTypes?.length || !inputTypes?.length) return false;
  const accepted = new Set(inputTypes.map(canonicalType));
  return outputTypes.some((t) => accepted.has(canonicalType(t)));
}

/** Whether a template field gets an input handle (it accepts connections). */
export function fieldHasHandle(field: TemplateField): boolean {
  return Array.isArray(field.input_types) && field.input_types.length > 0;
}

const COLOURS: Record<string, string> = {
  Message: "#4f46e5",
  Text: "#4f46e5",
  JSON: "#dc2626",
  Table: "#db2777",
  Tool: "#0891b2",
  LanguageModel: "#c026d3",
  Embeddings: "#059669",
  Memory: "#ea580c",
  Document: "#65a30d",
  Any: "#64748b",
};

/** A stable colour for a type name (aliases share their colour). */
export function typeColour(t: string | undefined): string {
  if (!t) return "#64748b";
  const c = COLOURS[canonicalType(t)];
  if (c) return c;
  let h = 0;
  for (const ch of t) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return `hsl(${h} 60% 45%)`;
}

/** Where a connection being dragged started: a node's output (its types) or a field (the types it accepts). */
export interface DragOrigin {
  nodeId: string;
  handleType: "source" | "target";
  types: string[];
}

/**
 * How a handle looks while a connection is dragged: `compatible` where the drop would be accepted (highlighted),
 * `dimmed` where it would be refused, `origin` for the handle the drag started from, null when nothing is dragged.
 */
export function handleHint(
  drag: DragOrigin | null,
  nodeId: string,
  handleType: "source" | "target",
  types: readonly string[] | null | undefined,
): "compatible" | "dimmed" | null {
  if (!drag) return null;
  if (handleType === drag.handleType || nodeId === drag.nodeId) return "dimmed";
  const ok = drag.handleType === "source" ? typesCompatible(drag.types, types) : typesCompatible(types, drag.types);
  return ok ? "compatible" : "dimmed";
}
