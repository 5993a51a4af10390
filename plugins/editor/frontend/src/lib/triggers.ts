// Executions, schedules and signed webhook triggers of a flow (plugins/triggers): shapes and pure helpers.

export interface Execution {
  id: string;
  run_id: string;
  flow_id: string;
  flow_name: string | null;
  trigger: string;
  status: string;
  started_at: number;
  ended_at: number | null;
  duration_s: number | null;
  due_at: number | null;
  input: string | null;
  output: string | null;
  error: string | null;
  session_id: string | null;
  retry_of: string | null;
  attempt: number;
  source_id: string | null;
  retryable: boolean;
  trace_url: string;
}

export interface Schedule {
  id: string;
  flow_id: string;
  name: string;
  cron: string | null;
  interval_s: number | null;
  timezone: string;
  input_value: string | null;
  enabled: boolean;
  missed: string;
  next_fire_at: string | null;
  last_fired_at: string | null;
  next_fire_times: string[];
}

export interface SignedTrigger {
  id: string;
  public_id: string;
  flow_id: string;
  name: string;
  enabled: boolean;
  tolerance_s: number;
  ingress_url: string;
  signature_header: string;
  timestamp_header: string;
  /** only in the answer to a creation or a rotation */
  signing_secret?: string;
}

export const EXECUTION_STATUSES = ["scheduled", "queued", "running", "ok", "error", "paused", "cancelled"] as const;
export const EXECUTION_TRIGGERS = ["run", "webhook", "build", "workflows", "mcp", "a2a", "responses", "schedule", "trigger", "retry", "error_flow"] as const;

/** A run's length in words a person reads: "—" while it runs, "850 ms", "12.3 s", "4 min 05 s". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m} min ${String(Math.floor(seconds % 60)).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** An epoch-seconds or ISO time in the browser's locale ("—" when absent or unreadable). */
export function formatWhen(at: number | string | null | undefined): string {
  if (at === null || at === undefined || at === "") return "—";
  const d = typeof at === "number" ? new Date(at * 1000) : new Date(at);
  return Number.isNaN(d.getTime()) ? "—" : d.toLocaleString();
}

/** The pill class of a status: ok is green, errors red, the rest muted (all from the theme's variables). */
export function statusTone(status: string): "ok" | "error" | "muted" {
  if (status === "ok") return "ok";
  if (status === "error" || status === "cancelled") return "error";
  return "muted";
}

/** How a schedule fires, in words: "every 5 min", "every 2 h", "cron 0 9 * * 1-5 (Europe/Paris)". */
export function describeSchedule(s: Pick<Schedule, "cron" | "interval_s" | "timezone">): string {
  if (s.cron) return `cron ${s.cron} (${s.timezone})`;
  const n = s.interval_s ?? 0;
  if (n > 0 && n % 86400 === 0) return `every ${n / 86400} d`;
  if (n > 0 && n % 3600 === 0) return `every ${n / 3600} h`;
  if (n > 0 && n % 60 === 0) return `every ${n / 60} min`;
  return `every ${n} s`;
}

export interface ScheduleForm {
  flowId: string;
  name: string;
  kind: "cron" | "interval";
  cron: string;
  timezone: string;
  every: string;
  unit: "s" | "min" | "h" | "d";
  inputValue: string;
  missed: "skip" | "run_once";
}

const UNIT_S = { s: 1, min: 60, h: 3600, d: 86400 } as const;

/**
 * The body of ``POST /api/v1/schedules`` from the form, or the first problem in words. The server checks
 * the cron expression and the time zone (422); this catches what the form can see: an empty cron, a cron
 * that is not five or six fields, an interval that is not a whole number of seconds from 1 s to a year.
 */
export function scheduleBody(f: ScheduleForm): { body: Record<string, unknown> } | { error: string } {
  const body: Record<string, unknown> = { flow_id: f.flowId, missed: f.missed };
  if (f.name.trim()) body.name = f.name.trim();
  if (f.inputValue !== "") body.input_value = f.inputValue;
  if (f.kind === "cron") {
    const cron = f.cron.trim().replace(/\s+/g, " ");
    if (!cron) return { error: "Enter a cron expression, for example 0 9 * * 1-5." };
    const n = cron.split(" ").length;
    if (n !== 5 && n !== 6) return { error: "A cron expression has five fields (minute hour day month weekday), or six with seconds." };
    body.cron = cron;
    body.timezone = f.timezone.trim() || "UTC";
  } else {
    const every = Number(f.every);
    if (!f.every.trim() || !Number.isFinite(every) || every <= 0) return { error: "Enter how often it runs, a number above 0." };
    const seconds = every * UNIT_S[f.unit];
    if (!Number.isInteger(seconds)) return { error: "The interval must be a whole number of seconds." };
    if (seconds > 31_536_000) return { error: "The interval is at most a year." };
    body.interval_s = seconds;
  }
  return { body };
}

/** The IANA zones the browser knows, the user's own first (falls back to a short list). */
export function timeZones(): string[] {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  let all: string[] = [];
  try {
    all = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.("timeZone") ?? [];
  } catch {
    all = [];
  }
  if (!all.length) all = ["UTC", "Europe/London", "Europe/Paris", "America/New_York", "America/Los_Angeles", "Asia/Tokyo"];
  return [...new Set(["UTC", own, ...all])];
}

/** A Python sender that signs a delivery the way the ingress checks it. */
export function signingSnippet(t: Pick<SignedTrigger, "ingress_url" | "signature_header" | "timestamp_header">, origin: string, secret?: string): string {
  const url = /^https?:/.test(t.ingress_url) ? t.ingress_url : `${origin}${t.ingress_url}`;
  return [
    "import hashlib, hmac, json, os, time",
    "import requests",
    "",
    `secret = ${secret ? JSON.stringify(secret) : 'os.environ["SERVICE_TRIGGER_SECRET"]'}`,
    'body = json.dumps({"text": "hello"}).encode()',
    "ts = str(int(time.time()))",
    'sig = "v1=" + hmac.new(secret.encode(), f"v1:{ts}:".encode() + body, hashlib.sha256).hexdigest()',
    `requests.post(${JSON.stringify(url)}, data=body,`,
    `              headers={${JSON.stringify(t.timestamp_header)}: ts, ${JSON.stringify(t.signature_header)}: sig})`,
  ].join("\n");
}

export interface RetryPolicy {
  flow_id: string;
  attempts: number;
  backoff_s: number;
  error_flow_id: string | null;
}

/** The body of ``PUT /api/v1/executions/policies/{flow_id}``, or the first problem in words. */
export function policyBody(attempts: string, backoff: string, errorFlowId: string): { body: Record<string, unknown> } | { error: string } {
  const n = Number(attempts);
  if (!attempts.trim() || !Number.isInteger(n) || n < 1 || n > 10) return { error: "Attempts is a whole number from 1 to 10." };
  const b = Number(backoff);
  if (!backoff.trim() || !Number.isFinite(b) || b < 0 || b > 86400) return { error: "The backoff is from 0 to 86400 seconds." };
  return { body: { attempts: n, backoff_s: b, error_flow_id: errorFlowId || null } };
}
