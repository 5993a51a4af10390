// A2A helpers of the flow settings dialog (kept apart from React for unit tests).

/** The overrides of the editor's text: `{value}` (null when empty) or `{error}` when it is not a JSON object. */
export function parseOverrides(text: string): { value: Record<string, unknown> | null } | { error: string } {
  if (!text.trim()) return { value: null };
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null) return { value: null };
    if (typeof value !== "object" || Array.isArray(value)) return { error: "The overrides must be a JSON object." };
    return { value: value as Record<string, unknown> };
  } catch (e) {
    return { error: `Not valid JSON: ${(e as Error).message}` };
  }
}
