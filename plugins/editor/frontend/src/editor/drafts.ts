/** Unsaved changes kept in this browser, and small helpers of the editor page. */
import type { Catalog, FlowData, FrontendNode } from "../lib/types";
import { catalogCategories } from "./Sidebar";

const DRAFT_PREFIX = "service-editor:draft:";
export const NOTE_SIZE = { width: 280, height: 180 };
/** how often an open flow asks for extension events (bundle reloads) */
export const EXTENSION_POLL_MS = 5000;

interface Draft {
  ts: number;
  data: FlowData;
}

export function readDraft(flowId: string): Draft | null {
  try {
    const raw = localStorage.getItem(DRAFT_PREFIX + flowId);
    return raw ? (JSON.parse(raw) as Draft) : null;
  } catch {
    return null;
  }
}

export function writeDraft(flowId: string, data: FlowData) {
  try {
    localStorage.setItem(DRAFT_PREFIX + flowId, JSON.stringify({ ts: Date.now(), data }));
  } catch {
    /* storage full or disabled: the server save still happens */
  }
}

export function clearDraft(flowId: string) {
  try {
    localStorage.removeItem(DRAFT_PREFIX + flowId);
  } catch {
    /* ignore */
  }
}

export function lookupCatalog(catalog: Catalog | null, key: string): FrontendNode | null {
  for (const [, entries] of catalogCategories(catalog)) for (const [k, n] of entries) if (k === key) return n;
  return null;
}

export function isEditable(el: EventTarget | null): boolean {
  const t = el as HTMLElement | null;
  if (!t) return false;
  return t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable;
}
