/**
 * Extension lifecycle events (`GET /api/v1/extensions/events`): what the editor does with them.
 *
 * The editor polls with a cursor (`since`, UTC epoch seconds). Two things matter to it:
 * - the component generation moved (any reload anywhere): the palette is fetched again;
 * - a `flow_migration` event names this flow: the nodes whose component changed or disappeared
 *   are shown, so the author can check them.
 */

export interface ExtensionEvent {
  type: string;
  timestamp: number;
  payload: Record<string, unknown>;
}

export interface ExtensionEvents {
  events: ExtensionEvent[];
  settled: boolean;
  generation?: number;
}

export interface AffectedNode {
  id: string;
  type: string;
  change: "changed" | "removed" | string;
  bundle: string;
}

export interface PollState {
  cursor: number;
  generation: number | null;
}

export interface PollOutcome {
  state: PollState;
  /** the palette must be fetched again */
  refreshCatalog: boolean;
  /** nodes of `flowId` a reload touched (newest reload first, one entry per node) */
  affected: AffectedNode[];
}

/** Fold one poll answer into the state: the new cursor, whether to refresh, the nodes of this flow. */
export function applyEvents(state: PollState, answer: ExtensionEvents, flowId: string): PollOutcome {
  let cursor = state.cursor;
  let reloaded = false;
  const affected = new Map<string, AffectedNode>();
  for (const event of answer.events) {
    if (typeof event.timestamp === "number" && event.timestamp > cursor) cursor = event.timestamp;
    if (event.type === "bundle_reload_succeeded" || event.type === "flow_migration") reloaded = true;
    if (event.type !== "flow_migration") continue;
    const bundle = String(event.payload.bundle ?? "");
    const flows = Array.isArray(event.payload.flows) ? event.payload.flows : [];
    for (const flow of flows as { flow_id?: string; nodes?: { id: string; type: string; change?: string }[] }[]) {
      if (flow.flow_id !== flowId) continue;
      for (const node of flow.nodes ?? []) affected.set(node.id, { id: node.id, type: node.type, change: node.change ?? "changed", bundle });
    }
  }
  const generation = typeof answer.generation === "number" ? answer.generation : state.generation;
  const moved = state.generation !== null && generation !== null && generation !== state.generation;
  return { state: { cursor, generation }, refreshCatalog: reloaded || moved, affected: [...affected.values()] };
}

/** One line per node for the banner: `Agent-1 (Agent, removed)`. */
export function describeAffected(nodes: AffectedNode[]): string {
  return nodes.map((n) => `${n.id} (${n.type}, ${n.change})`).join(", ");
}
