// Flow versions, publishing and save conflicts (docs/versions.md): types and the History dialog's diff
// summary (the conflict dialog's three-way merge is lib/merge.ts).
import type { FlowData, FlowRecord } from "./types";

export interface FlowVersion {
  id: string;
  flow_id: string;
  user_id: string | null;
  version_number: number;
  description: string | null;
  created_at: string;
  username: string | null;
  version_tag: string;
  auto?: boolean;
}

export interface Publication {
  flow_id: string;
  published: boolean;
  version: FlowVersion | null;
  published_at: string | null;
  published_by?: string | null;
  /** who published it (they could write this flow); null for a deleted account */
  published_by_username?: string | null;
}

export interface NodeSummary {
  id: string;
  type?: string | null;
  display_name?: string | null;
}

export interface VersionDiff {
  from: string;
  to: string;
  added: NodeSummary[];
  removed: NodeSummary[];
  moved: NodeSummary[];
  changed: (NodeSummary & { fields: { field: string; before: unknown; after: unknown }[]; members: string[] })[];
  edges: { added: { source: string; target: string }[]; removed: { source: string; target: string }[] };
  unchanged: boolean;
}

export interface ConflictDetail {
  code: "flow_version_conflict";
  message: string;
  flow_id: string;
  expected_version_token: string | null;
  current_version_token: string | null;
  modified_by: { id: string | null; username: string | null };
  modified_at: string | null;
  current: FlowRecord;
  submitted: FlowData;
}

export function asConflict(body: unknown): ConflictDetail | null {
  const detail = body && typeof body === "object" ? (body as { detail?: unknown }).detail : undefined;
  if (detail && typeof detail === "object" && (detail as { code?: unknown }).code === "flow_version_conflict") {
    return detail as ConflictDetail;
  }
  return null;
}

export function diffSummary(diff: VersionDiff): string {
  if (diff.unchanged) return "No changes";
  const parts: string[] = [];
  if (diff.added.length) parts.push(`${diff.added.length} added`);
  if (diff.removed.length) parts.push(`${diff.removed.length} removed`);
  if (diff.changed.length) parts.push(`${diff.changed.length} changed`);
  if (diff.moved.length) parts.push(`${diff.moved.length} moved`);
  const edges = diff.edges.added.length + diff.edges.removed.length;
  if (edges) parts.push(`${edges} connection${edges === 1 ? "" : "s"}`);
  return parts.join(", ");
}
