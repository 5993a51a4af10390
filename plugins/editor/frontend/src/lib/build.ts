// Build state from build-job events (reference-api.md section 3): per-node status and the playground messages.
import type { BuildEvent } from "./ndjson";

export type NodeStatus = "queued" | "running" | "done" | "error" | "inactive";

export interface LogEntry {
  name?: string;
  message: string;
  type?: string;
}

export interface NodeRun {
  status: NodeStatus;
  duration?: string;
  preview?: string;
  error?: string;
  /** what the component logged (``self.log``): often the reason a result is empty */
  logs?: LogEntry[];
}

export interface ChatMessage {
  id: string;
  sender: string; // "User" | "Machine"
  sender_name: string;
  text: string;
  session_id?: string;
  timestamp?: string;
  error?: boolean;
  streaming?: boolean;
  /** paths of the files attached to the message */
  files?: string[];
}

/** An agent's tool call as the playground shows it (from `tool_call` events). */
export interface ToolCallView {
  id: string;
  tool: string;
  arguments: string;
  result?: string;
  done: boolean;
}

/** A run paused for a human decision (the `suspended` event; an agent's tool approval). */
export interface PendingApproval {
  request_id: string;
  vertex_id: string;
  tool?: string;
  arguments?: Record<string, unknown>;
  actions: string[];
}

export interface BuildState {
  running: boolean;
  nodes: Record<string, NodeRun>;
  messages: ChatMessage[];
  toolCalls?: ToolCallView[];
  pending?: PendingApproval;
  error?: string;
  duration?: number;
}

export const initialBuild: BuildState = { running: false, nodes: {}, messages: [] };

function textOf(v: unknown): string {
  if (v == null) return "";
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/** A short text for a vertex result: the first output's message. */
export function outputPreview(buildData: any): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  const outputs = buildData?.data?.outputs;
  if (outputs && typeof outputs === "object") {
    for (const o of Object.values<any>(outputs)) { // eslint-disable-line @typescript-eslint/no-explicit-any
      if (o && o.type !== "error") {
        const m = o.message;
        const t = typeof m === "object" && m && "text" in m ? (m as { text: unknown }).text : m;
        return textOf(t).slice(0, 500);
      }
    }
  }
  const results = buildData?.data?.results;
  if (results && typeof results === "object") {
    for (const r of Object.values<any>(results)) return textOf(r?.text ?? r).slice(0, 500); // eslint-disable-line @typescript-eslint/no-explicit-any
  }
  return "";
}

function vertexError(buildData: any): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  const outputs = buildData?.data?.outputs;
  if (outputs && typeof outputs === "object") {
    for (const o of Object.values<any>(outputs)) { // eslint-disable-line @typescript-eslint/no-explicit-any
      if (o?.type === "error") return textOf(o.message?.errorMessage ?? o.message);
    }
  }
  return textOf(buildData?.params) || "The component failed.";
}

/** The vertex's log entries: ``data.logs`` maps each output to the same list, so keep each entry once. */
export function vertexLogs(buildData: any): LogEntry[] { // eslint-disable-line @typescript-eslint/no-explicit-any
  const logs = buildData?.data?.logs;
  if (!logs || typeof logs !== "object") return [];
  const seen = new Set<string>();
  const out: LogEntry[] = [];
  for (const entries of Object.values<any>(logs)) { // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const e of Array.isArray(entries) ? entries : []) {
      const entry: LogEntry = { name: e?.name || undefined, message: textOf(e?.message ?? e), type: e?.type };
      const key = JSON.stringify(entry);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(entry);
      }
    }
  }
  return out;
}

function toMessage(d: any): ChatMessage { // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    id: String(d.id ?? d.data?.id ?? Math.random()),
    sender: d.sender ?? d.data?.sender ?? "Machine",
    sender_name: d.sender_name ?? d.data?.sender_name ?? "AI",
    text: textOf(d.text ?? d.data?.text ?? ""),
    session_id: d.session_id ?? d.data?.session_id,
    timestamp: d.timestamp,
    error: !!d.error,
    files: Array.isArray(d.files ?? d.data?.files) ? (d.files ?? d.data?.files).map((f: unknown) => (typeof f === "string" ? f : String((f as { path?: unknown })?.path ?? ""))).filter(Boolean) : undefined,
  };
}

/** Apply one event; returns a new state (pure). */
export function applyEvent(state: BuildState, ev: BuildEvent): BuildState {
  const d = ev.data ?? {};
  switch (ev.event) {
    case "vertices_sorted": {
      const nodes = { ...state.nodes };
      for (const id of (d.to_run ?? d.ids ?? []) as string[]) nodes[id] = { status: "queued" };
      for (const id of (d.ids ?? []) as string[]) nodes[id] = { status: "running" };
      return { ...state, running: true, nodes, error: undefined };
    }
    case "build_start":
      return { ...state, running: true };
    case "end_vertex": {
      const b = d.build_data ?? {};
      const id: string = b.id ?? d.id;
      if (!id) return state;
      const nodes = { ...state.nodes };
      const valid = b.valid !== false;
      const dur = b.data?.duration ?? b.data?.timedelta;
      nodes[id] = {
        status: valid ? "done" : "error",
        duration: typeof dur === "number" ? formatSeconds(dur) : dur != null ? String(dur) : undefined,
        preview: valid ? outputPreview(b) : undefined,
        error: valid ? undefined : vertexError(b),
        logs: vertexLogs(b),
      };
      for (const next of (b.next_vertices_ids ?? []) as string[]) {
        if (!nodes[next] || nodes[next].status === "queued") nodes[next] = { status: "running" };
      }
      for (const off of (b.inactivated_vertices ?? []) as string[]) nodes[off] = { status: "inactive" };
      return { ...state, nodes };
    }
    case "add_message": {
      const m = toMessage(d);
      let i = state.messages.findIndex((x) => x.id === m.id);
      // a streamed answer stored by another component under its own id (a model streams, Chat Output
      // stores a copy): the stored message takes the streamed one's place instead of showing it twice
      if (i < 0 && m.sender !== "User") i = state.messages.findIndex((x) => x.streaming && x.text === m.text);
      const messages = [...state.messages];
      if (i >= 0) messages[i] = { ...messages[i], ...m, streaming: false };
      else messages.push(m);
      return { ...state, messages };
    }
    case "remove_message":
      return { ...state, messages: state.messages.filter((m) => m.id !== String(d.id)) };
    case "token": {
      const id = String(d.id ?? "");
      const chunk = textOf(d.chunk);
      const i = state.messages.findIndex((x) => x.id === id);
      const messages = [...state.messages];
      if (i >= 0) messages[i] = { ...messages[i], text: messages[i].text + chunk, streaming: true };
      else messages.push({ id, sender: "Machine", sender_name: "AI", text: chunk, streaming: true });
      return { ...state, messages };
    }
    case "tool_call": {
      const id = String(d.id ?? "");
      const calls = [...(state.toolCalls ?? [])];
      const i = calls.findIndex((c) => c.id === id);
      const prev: ToolCallView = i >= 0 ? calls[i] : { id, tool: String(d.tool ?? ""), arguments: "", done: false };
      const next: ToolCallView = { ...prev, tool: String(d.tool || prev.tool), arguments: String(d.arguments || prev.arguments) };
      if (d.phase === "result") {
        next.result = textOf(d.result);
        next.done = true;
      }
      if (i >= 0) calls[i] = next;
      else calls.push(next);
      return { ...state, toolCalls: calls };
    }
    case "suspended": {
      const req = d.request ?? {};
      const pending: PendingApproval = {
        request_id: String(d.request_id ?? req.request_id ?? ""),
        vertex_id: String(d.vertex_id ?? ""),
        tool: req.tool,
        arguments: req.arguments,
        actions: Array.isArray(req.actions) ? req.actions.map(String) : ["approve", "reject"],
      };
      const nodes = { ...state.nodes };
      if (pending.vertex_id && nodes[pending.vertex_id]) nodes[pending.vertex_id] = { status: "queued" };
      return { ...state, running: false, nodes, pending };
    }
    case "end": {
      const nodes = { ...state.nodes };
      const messages = state.messages.some((m) => m.streaming) ? state.messages.map((m) => (m.streaming ? { ...m, streaming: false } : m)) : state.messages;
      for (const [id, r] of Object.entries(nodes)) if (r.status === "running" || r.status === "queued") nodes[id] = { status: "inactive" };
      // a failed component ends the build too: say so where the user is looking (the playground)
      const failed = Object.values(nodes).find((r) => r.status === "error");
      const error = state.error ?? (failed ? failed.error || "A component failed." : undefined);
      return { ...state, running: false, nodes, messages, error, duration: typeof d.build_duration === "number" ? d.build_duration : undefined };
    }
    case "error": {
      const text = textOf(d.text ?? d.error ?? d.detail ?? d.message ?? "The build failed.");
      const nodes = { ...state.nodes };
      // when a component already failed, the nodes scheduled after it never ran: skipped, not failed
      const failedAlready = Object.values(nodes).some((r) => r.status === "error");
      for (const [id, r] of Object.entries(nodes))
        if (r.status === "running") nodes[id] = failedAlready ? { status: "inactive" } : { status: "error", error: text };
      for (const [id, r] of Object.entries(nodes)) if (r.status === "queued") nodes[id] = { status: "inactive" };
      return { ...state, running: false, nodes, error: text };
    }
    default:
      return state;
  }
}

export function formatSeconds(s: number): string {
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  return `${s.toFixed(2)} s`;
}
