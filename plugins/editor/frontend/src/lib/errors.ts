// API errors in plain words: `{detail: string}`, `{detail: {message}}`, or 422 `{detail: [{loc, msg, type}]}`.

export class ApiError extends Error {
  constructor(public status: number, message: string, public body?: unknown) {
    super(message);
  }
}

function locText(loc: unknown): string {
  if (!Array.isArray(loc)) return "";
  const parts = loc.filter((p) => p !== "body" && p !== "query" && p !== "json").map(String);
  return parts.join(" › ");
}

export function describeError(status: number, body: unknown): string {
  const detail = body && typeof body === "object" ? (body as { detail?: unknown }).detail : undefined;
  if (Array.isArray(detail)) {
    const items = detail.map((d) => {
      if (d && typeof d === "object") {
        const where = locText((d as { loc?: unknown }).loc);
        const msg = String((d as { msg?: unknown }).msg ?? "is invalid");
        return where ? `${where}: ${msg}` : msg;
      }
      return String(d);
    });
    return items.length ? items.join("; ") : "The request was not valid.";
  }
  if (typeof detail === "string" && detail) return withStatusHint(status, detail);
  if (detail && typeof detail === "object") {
    const m = (detail as { message?: unknown; error?: unknown }).message ?? (detail as { error?: unknown }).error;
    if (typeof m === "string") return m;
    return JSON.stringify(detail);
  }
  if (typeof body === "string" && body.trim() && !body.trim().startsWith("<")) return body.trim().slice(0, 300);
  return statusText(status);
}

function withStatusHint(status: number, detail: string): string {
  if (detail === "Not Found" && status === 404) return "Not found: this feature or item is not available on the server.";
  return detail;
}

export function statusText(status: number): string {
  if (status === 0) return "The server cannot be reached. Check that it is running.";
  if (status === 401) return "Your session has expired. Please sign in again.";
  if (status === 403) return "You are not allowed to do this.";
  if (status === 404) return "Not found.";
  if (status === 413) return "The file is too large.";
  if (status === 429) return "Too many requests. Please wait a minute and try again.";
  if (status >= 500) return `The server failed (error ${status}). Please try again.`;
  return `The request failed (error ${status}).`;
}
