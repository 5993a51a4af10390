// The public playground at /playground/<flow id>: anonymous chat with a shared flow over
// POST /api/v2/workflows/public (AG-UI stream), as the client_id cookie's visitor.
import { useEffect, useRef, useState } from "react";
import { frameBatches, takeFrames } from "../lib/sse";

interface Line {
  id: string;
  who: "user" | "ai" | "error";
  text: string;
}

function clientId(): string {
  const found = document.cookie.split("; ").find((c) => c.startsWith("client_id="));
  if (found) return found.slice("client_id=".length);
  const id = crypto.randomUUID ? crypto.randomUUID() : `visitor-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  document.cookie = `client_id=${id}; path=/; max-age=31536000; SameSite=Lax`;
  return id;
}

export { takeFrames };

export function PublicPlaygroundPage(props: { flowId: string }) {
  const [name, setName] = useState<string | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const [lines, setLines] = useState<Line[]>([]);
  const [text, setText] = useState("");
  const [running, setRunning] = useState(false);
  const session = useRef<string>(crypto.randomUUID ? crypto.randomUUID() : `s-${Date.now()}`);

  useEffect(() => {
    clientId();
    fetch(`/api/v1/flows/public_flow/${encodeURIComponent(props.flowId)}`, { credentials: "same-origin" })
      .then(async (r) => {
        if (r.ok) setName(((await r.json()) as { name: string }).name);
        else setMissing(r.status === 403 ? "Public access is not authorized on this server." : "This link does not lead to a shared flow (it may have been revoked).");
      })
      .catch(() => setMissing("The server cannot be reached."));
  }, [props.flowId]);

  const send = async () => {
    const input = text.trim();
    if (!input || running) return;
    setText("");
    setRunning(true);
    setLines((l) => [...l, { id: `u-${Date.now()}`, who: "user", text: input }]);
    clientId();
    try {
      const res = await fetch("/api/v2/workflows/public", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ flow_id: props.flowId, input_value: input, mode: "stream", stream_protocol: "agui", session_id: session.current }),
      });
      if (!res.ok || !res.body) {
        const detail = res.status === 429 ? "Too many messages: wait a minute and try again." : res.status === 404 ? "This flow is no longer shared." : `The run failed (${res.status}).`;
        setLines((l) => [...l, { id: `e-${Date.now()}`, who: "error", text: detail }]);
        return;
      }
      for await (const frames of frameBatches(res.body)) {
        for (const f of frames as { type: string; messageId?: string; delta?: string; message?: string }[]) {
          if (f.type === "TEXT_MESSAGE_START" && f.messageId) setLines((l) => [...l, { id: f.messageId!, who: "ai", text: "" }]);
          else if (f.type === "TEXT_MESSAGE_CONTENT" && f.messageId)
            setLines((l) => l.map((x) => (x.id === f.messageId ? { ...x, text: x.text + (f.delta ?? "") } : x)));
          else if (f.type === "RUN_ERROR") setLines((l) => [...l, { id: `e-${Date.now()}`, who: "error", text: f.message ?? "The run failed." }]);
        }
      }
    } catch {
      setLines((l) => [...l, { id: `e-${Date.now()}`, who: "error", text: "The server cannot be reached." }]);
    } finally {
      setRunning(false);
    }
  };

  if (missing) {
    return (
      <div className="splash">
        <h1>Flow not available</h1>
        <p data-testid="public-missing">{missing}</p>
      </div>
    );
  }
  return (
    <div className="public-playground" data-testid="public-playground">
      <header className="topbar">
        <strong>{name ?? "…"}</strong>
        <span className="muted"> · public playground</span>
      </header>
      <main className="public-chat">
        <ol className="messages" aria-live="polite">
          {lines.map((m) => (
            <li key={m.id} className={`msg msg-${m.who}`} data-testid={`msg-${m.who}`}>
              {m.text}
            </li>
          ))}
        </ol>
        <form
          className="composer"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          <textarea
            aria-label="Message"
            value={text}
            disabled={name === null}
            placeholder="Send a message…"
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                void send();
              }
            }}
          />
          <button className="btn btn-primary" type="submit" disabled={running || !text.trim()}>
            {running ? "Running…" : "Send"}
          </button>
        </form>
      </main>
    </div>
  );
}
