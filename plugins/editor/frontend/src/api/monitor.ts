// Run traces, token usage and budgets (plugins/observability, issue 30): the Flow Activity and Usage pages.
import { request } from "./client";

export interface TraceSummary {
  id: string;
  name: string;
  status: "ok" | "error" | "unset";
  startTime: string | null;
  totalLatencyMs: number;
  totalTokens: number;
  flowId: string;
  sessionId: string | null;
  input: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
}

export interface TracePage {
  traces: TraceSummary[];
  total: number;
  pages: number;
}

export interface Span {
  id: string;
  name: string;
  type: string;
  status: string;
  startTime: string | null;
  endTime: string | null;
  latencyMs: number;
  inputs: Record<string, unknown> | null;
  outputs: Record<string, unknown> | null;
  error: string | null;
  modelName: string | null;
  tokenUsage: { promptTokens: number; completionTokens: number; totalTokens: number } | null;
  children: Span[];
}

export interface TraceDetail extends TraceSummary {
  endTime: string | null;
  spans: Span[];
}

export interface UsageFigures {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cost: number;
}

export interface UsageReport {
  groupBy: string;
  rows: (UsageFigures & { key: string | null })[];
  total: UsageFigures;
}

export interface Budget {
  id: string;
  scope: "user" | "project" | "flow";
  scopeId: string;
  metric: "tokens" | "calls" | "cost";
  period: "day" | "month";
  limit: number;
  used: number;
  remaining: number;
  resetsAt: string;
}

export type BudgetBody = { scope: Budget["scope"]; scope_id: string; metric: Budget["metric"]; period: Budget["period"]; limit: number };

export const monitorApi = {
  traces: (flowId: string, page: number, size: number) =>
    request<TracePage>("/api/v1/monitor/traces", { query: { flow_id: flowId, page, size } }),
  trace: (id: string) => request<TraceDetail>(`/api/v1/monitor/traces/${encodeURIComponent(id)}`),
  usage: (groupBy: "flow" | "model", startTime: string | null) =>
    request<UsageReport>("/api/v1/monitor/usage", { query: { group_by: groupBy, start_time: startTime } }),
  budgets: () => request<Budget[]>("/api/v1/monitor/budgets"),
  createBudget: (body: BudgetBody) => request<Budget>("/api/v1/monitor/budgets", { method: "POST", json: body }),
  deleteBudget: (id: string) => request(`/api/v1/monitor/budgets/${encodeURIComponent(id)}`, { method: "DELETE" }),
};

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

export function formatWhen(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}

export const PERIODS = [
  { id: "today", label: "Today" },
  { id: "7d", label: "Last 7 days" },
  { id: "30d", label: "Last 30 days" },
  { id: "month", label: "This month" },
  { id: "all", label: "All time" },
] as const;
export type Period = (typeof PERIODS)[number]["id"];

/** The period's start (UTC, as budgets count), or null for all time. */
export function periodStart(period: Period, now = new Date()): string | null {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const start =
    period === "today" ? day
    : period === "7d" ? day - 6 * 86400000
    : period === "30d" ? day - 29 * 86400000
    : period === "month" ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)
    : null;
  return start === null ? null : new Date(start).toISOString();
}
