// Notifications: every error reaches the user in plain words (role=alert), successes briefly.
import { useEffect, useState } from "react";
import { ApiError } from "../lib/errors";

export interface Toast {
  id: number;
  kind: "error" | "success" | "info";
  text: string;
}

let seq = 0;
let toasts: Toast[] = [];
const subs = new Set<(t: Toast[]) => void>();

function emit() {
  subs.forEach((s) => s(toasts));
}

export function notify(kind: Toast["kind"], text: string, ms = kind === "error" ? 8000 : 3000) {
  const t = { id: ++seq, kind, text };
  toasts = [...toasts.filter((x) => x.text !== text), t].slice(-5);
  emit();
  setTimeout(() => dismiss(t.id), ms);
}

export function dismiss(id: number) {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

/** Show an error (ApiError or anything thrown) with an optional context prefix. */
export function notifyError(e: unknown, context?: string) {
  if ((e as Error)?.name === "AbortError") return;
  const msg = e instanceof ApiError ? e.message : e instanceof Error ? e.message : String(e);
  notify("error", context ? `${context}: ${msg}` : msg);
}

export function Toasts() {
  const [list, setList] = useState<Toast[]>(toasts);
  useEffect(() => {
    subs.add(setList);
    return () => void subs.delete(setList);
  }, []);
  return (
    <div className="toasts" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === "error" ? "alert" : "status"}>
          <span>{t.text}</span>
          <button className="icon-btn" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
