import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, request, type MonitorMessage } from "../api/client";
import { Icon } from "../components/Icon";
import { ConfirmDialog, PromptDialog } from "../components/Modal";
import { notifyError } from "../components/toast";
import type { ChatMessage, PendingApproval, ToolCallView } from "../lib/build";
import { ApiError } from "../lib/errors";
import { latestOnly } from "../lib/latest";
import { MessageLogs } from "./MessageLogs";
import { useBuildState } from "./store";

interface Props {
  flowId: string;
  hasChatInput: boolean;
  /** ``files``: paths of files uploaded to the flow (sent on the chat input, as the reference's Playground does) */
  onRun: (input: string, session: string, files: string[]) => Promise<void>;
  onStop: () => void;
  onClose: () => void;
  /** answer a paused run (approve / reject / edit a tool call) */
  onDecide?: (requestId: string, actionId: string, values: Record<string, unknown>) => Promise<void>;
  /** messages of finished builds, kept here when the monitor API is not available */
  archive: ChatMessage[];
  /** text put in the input box when the Playground opens (an execution's input, from the Automation dialog) */
  initialInput?: string;
  /** the caller owns the flow or edits it through a team (developer, admin): a session renamed or deleted here is
   * the flow's session of every user (``flow_id`` sent); a viewer or a run-only member works on their own messages */
  manageFlowSessions?: boolean;
}

function fromMonitor(m: MonitorMessage): ChatMessage {
  const files = Array.isArray((m as { files?: unknown }).files) ? ((m as { files?: unknown[] }).files ?? []).map(String) : undefined;
  return { id: m.id, sender: m.sender, sender_name: m.sender_name, text: m.text ?? "", session_id: m.session_id, timestamp: m.timestamp, error: !!m.error, files };
}

/** Images and text files a model can take (the server checks the content, not the name). */
const ATTACH_ACCEPT = "image/png,image/jpeg,image/gif,image/webp,.txt,.md,.csv,.json";

interface Attached {
  name: string;
  path: string;
}

/** Upload a file to the flow (``POST /api/v1/files/upload/{flow_id}``); its stored path. */
async function uploadToFlow(flowId: string, file: File): Promise<Attached> {
  const form = new FormData();
  form.append("file", file, file.name);
  const res = await request<{ file_path: string }>(`/api/v1/files/upload/${encodeURIComponent(flowId)}`, { method: "POST", body: form });
  return { name: file.name, path: res.file_path };
}

function fileName(path: string): string {
  const last = path.split("/").pop() ?? path;
  return last.replace(/^\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_/, ""); // the upload's timestamp prefix
}

function ToolCalls({ calls }: { calls: ToolCallView[] }) {
  if (!calls.length) return null;
  return (
    <div className="pg-tools" data-testid="tool-calls">
      {calls.map((c) => (
        <details key={c.id} className="pg-tool" data-testid="tool-call">
          <summary>
            {c.done ? "✓" : "…"} <code>{c.tool}</code>
          </summary>
          <div className="small muted">Arguments</div>
          <pre>{c.arguments || "{}"}</pre>
          {c.result !== undefined && (
            <>
              <div className="small muted">Result</div>
              <pre>{c.result}</pre>
            </>
          )}
        </details>
      ))}
    </div>
  );
}

function ApprovalCard({ pending, onDecide }: { pending: PendingApproval; onDecide: NonNullable<Props["onDecide"]> }) {
  const [editing, setEditing] = useState(false);
  const [args, setArgs] = useState(JSON.stringify(pending.arguments ?? {}, null, 2));
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const decide = async (action: string, values: Record<string, unknown>) => {
    setBusy(true);
    try {
      await onDecide(pending.request_id, action, values);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="msg msg-approval" role="group" aria-label="Approval needed" data-testid="approval-card">
      <div className="msg-sender">Approval needed</div>
      <div className="msg-text">
        The agent wants to call <code>{pending.tool}</code>
        <pre>{JSON.stringify(pending.arguments ?? {}, null, 2)}</pre>
        {editing && <textarea aria-label="New arguments (JSON)" value={args} rows={4} onChange={(e) => setArgs(e.target.value)} />}
        <input aria-label="Reason (optional)" placeholder="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} />
        <div className="row">
          <button className="btn btn-primary" disabled={busy} onClick={() => void decide("approve", reason ? { message: reason } : {})}>
            Approve
          </button>
          <button className="btn btn-danger" disabled={busy} onClick={() => void decide("reject", reason ? { message: reason } : {})}>
            Reject
          </button>
          {!editing ? (
            <button className="btn" disabled={busy} onClick={() => setEditing(true)}>
              Edit
            </button>
          ) : (
            <button
              className="btn"
              disabled={busy}
              onClick={() => {
                try {
                  void decide("edit", { arguments: JSON.parse(args) });
                } catch {
                  notifyError(new Error("The arguments are not valid JSON"), "Cannot send the edit");
                }
              }}
            >
              Send edited call
            </button>
          )}
        </div>
      </div>
    </div>
  );
}

export function Playground({ flowId, hasChatInput, onRun, onStop, onClose, archive, onDecide, initialInput, manageFlowSessions = true }: Props) {
  const scope = manageFlowSessions ? flowId : undefined;
  const build = useBuildState();
  const [sessions, setSessions] = useState<string[]>([]);
  const [session, setSession] = useState(flowId);
  const [history, setHistory] = useState<ChatMessage[]>([]);
  const [monitorMissing, setMonitorMissing] = useState(false);
  const [input, setInput] = useState(initialInput ?? "");
  const [attached, setAttached] = useState<Attached[]>([]);
  const [uploading, setUploading] = useState(false);
  const fileRef = useRef<HTMLInputElement>(null);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [logs, setLogs] = useState(false);
  const listRef = useRef<HTMLDivElement>(null);

  const startSessionsLoad = useMemo(latestOnly, []);
  const startHistoryLoad = useMemo(latestOnly, []);
  const loadSessions = useCallback(async () => {
    const isNewest = startSessionsLoad();
    try {
      const list = await api.sessions(flowId);
      if (!isNewest()) return;
      setSessions(list);
      setMonitorMissing(false);
    } catch (e) {
      if (!isNewest()) return;
      if (e instanceof ApiError && (e.status === 404 || e.status === 405)) setMonitorMissing(true);
      else notifyError(e, "Could not load the chat sessions");
    }
  }, [flowId, startSessionsLoad]);

  const loadHistory = useCallback(
    async (s: string) => {
      const isNewest = startHistoryLoad(); // switching sessions quickly: the last one chosen is shown
      try {
        const msgs = await api.messages(flowId, s);
        if (isNewest()) setHistory(msgs.map(fromMonitor));
      } catch (e) {
        if (!isNewest()) return;
        if (e instanceof ApiError && (e.status === 404 || e.status === 405)) setMonitorMissing(true);
        else notifyError(e, "Could not load the messages");
        setHistory([]);
      }
    },
    [flowId, startHistoryLoad],
  );

  useEffect(() => {
    void loadSessions();
  }, [loadSessions]);
  useEffect(() => {
    void loadHistory(session);
  }, [session, loadHistory]);

  // after a build ends, the monitor has the stored messages: refresh the list of sessions
  const wasRunning = useRef(false);
  useEffect(() => {
    if (wasRunning.current && !build.running) void loadSessions();
    wasRunning.current = build.running;
  }, [build.running, loadSessions]);

  const seen = new Set<string>();
  const messages: ChatMessage[] = [];
  for (const m of [...history, ...archive, ...build.messages]) {
    if ((m.session_id && m.session_id !== session) || seen.has(m.id)) continue;
    seen.add(m.id);
    messages.push(m);
  }

  useEffect(() => {
    listRef.current?.scrollTo({ top: listRef.current.scrollHeight });
  }, [messages.length, build.messages]);

  const allSessions = sessions.includes(session) ? sessions : [session, ...sessions];

  async function send() {
    const text = input;
    if (build.running || uploading) return;
    const files = attached.map((a) => a.path);
    setInput("");
    setAttached([]);
    await onRun(text, session, files);
  }

  async function attach(list: FileList | null) {
    if (!list?.length) return;
    setUploading(true);
    try {
      for (const file of Array.from(list)) {
        const done = await uploadToFlow(flowId, file);
        setAttached((a) => [...a, done]);
      }
    } catch (e) {
      notifyError(e, "Could not attach the file");
    } finally {
      setUploading(false);
      if (fileRef.current) fileRef.current.value = "";
    }
  }

  return (
    <aside className="playground" aria-label="Playground" data-testid="playground">
      <header className="pg-head">
        <h2>Playground</h2>
        <button className="icon-btn" aria-label="Close the playground" onClick={onClose}>
          ×
        </button>
      </header>
      <div className="pg-sessions">
        <div className="pg-sessions-head">
          <span className="muted small">Sessions</span>
          <span className="row">
            {!monitorMissing && (
              <button className="btn btn-small" onClick={() => setLogs(true)}>
                Message logs
              </button>
            )}
            <button className="btn btn-small" onClick={() => setSession(`Session ${new Date().toLocaleString()}`)}>
              New session
            </button>
          </span>
        </div>
        {monitorMissing && <p className="muted small">Message history is not available on this server.</p>}
        <ul>
          {allSessions.map((s) => (
            <li key={s} className={s === session ? "active" : ""}>
              <button className="pg-session" onClick={() => setSession(s)} aria-current={s === session ? "true" : undefined} title={s}>
                {s === flowId ? "Default session" : s}
              </button>
              <button className="icon-btn" aria-label={`Rename session ${s}`} title="Rename" onClick={() => setRenaming(s)}>
                <Icon name="pencil" />
              </button>
              <button className="icon-btn" aria-label={`Delete session ${s}`} title="Delete" onClick={() => setDeleting(s)}>
                <Icon name="trash" />
              </button>
            </li>
          ))}
        </ul>
      </div>
      <div className="pg-messages" ref={listRef} aria-live="polite" data-testid="chat-messages">
        {messages.length === 0 && <p className="muted pad">{hasChatInput ? "Send a message to run the flow." : "This flow has no Chat Input: press Run to build it."}</p>}
        {messages.map((m) => (
          <div
            key={m.id}
            className={`msg ${m.sender === "User" ? "msg-user" : "msg-ai"}${m.error ? " msg-error" : ""}`}
            data-testid={m.sender === "User" ? "msg-user" : "msg-ai"}
            data-error={m.error ? "true" : undefined}
          >
            <div className="msg-sender">{m.sender_name || m.sender}</div>
            <div className="msg-text">
              {m.text}
              {m.streaming && <span className="cursor" aria-hidden>▍</span>}
            </div>
            {!!m.files?.length && (
              <ul className="msg-files" aria-label="Attached files">
                {m.files.map((f) => (
                  <li key={f}>
                    <Icon name="paperclip" size={12} /> {fileName(f)}
                  </li>
                ))}
              </ul>
            )}
          </div>
        ))}
        <ToolCalls calls={build.toolCalls ?? []} />
        {build.pending && onDecide && <ApprovalCard key={build.pending.request_id} pending={build.pending} onDecide={onDecide} />}
        {build.error && (
          <div className="msg msg-error" role="alert">
            <div className="msg-sender">Error</div>
            <div className="msg-text">{build.error}</div>
          </div>
        )}
      </div>
      <form
        className="pg-input"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        {attached.length > 0 && (
          <ul className="pg-attached" aria-label="Files to send" data-testid="attached-files">
            {attached.map((a) => (
              <li key={a.path}>
                <Icon name="paperclip" size={12} /> {a.name}
                <button type="button" className="icon-btn" aria-label={`Remove ${a.name}`} onClick={() => setAttached((list) => list.filter((x) => x.path !== a.path))}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <input ref={fileRef} type="file" accept={ATTACH_ACCEPT} multiple hidden aria-label="File to attach" data-testid="attach-input" onChange={(e) => void attach(e.target.files)} />
        {hasChatInput && (
          <button type="button" className="icon-btn pg-attach" aria-label="Attach a file" title="Attach an image or a text file" disabled={uploading || build.running} onClick={() => fileRef.current?.click()}>
            {uploading ? "…" : <Icon name="paperclip" size={18} />}
          </button>
        )}
        <textarea
          aria-label="Message"
          placeholder={hasChatInput ? "Type a message… (Enter to send, Shift+Enter for a new line)" : "No Chat Input in this flow"}
          value={input}
          rows={2}
          onChange={(e) => setInput(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              void send();
            }
          }}
        />
        {build.running ? (
          <button type="button" className="btn btn-danger" onClick={onStop}>
            Stop
          </button>
        ) : (
          <button type="submit" className="btn btn-primary">
            {hasChatInput ? "Send" : "Run"}
          </button>
        )}
      </form>
      {logs && (
        <MessageLogs
          flowId={flowId}
          onClose={() => setLogs(false)}
          onChanged={() => {
            void loadSessions();
            void loadHistory(session);
          }}
        />
      )}
      {renaming !== null && (
        <PromptDialog
          title="Rename session"
          label="Session name"
          initial={renaming}
          onClose={() => setRenaming(null)}
          onSubmit={async (name) => {
            try {
              if (sessions.includes(renaming)) await api.renameSession(renaming, name, scope);
              if (session === renaming) setSession(name);
              setRenaming(null);
              await loadSessions();
            } catch (e) {
              notifyError(e, "Could not rename the session");
            }
          }}
        />
      )}
      {deleting !== null && (
        <ConfirmDialog
          title="Delete session"
          text={`Delete every message of “${deleting === flowId ? "Default session" : deleting}”?`}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              if (sessions.includes(deleting)) await api.deleteSession(deleting, scope);
              setDeleting(null);
              if (session === deleting) setSession(flowId);
              setHistory([]);
              await loadSessions();
              await loadHistory(session === deleting ? flowId : session);
            } catch (e) {
              notifyError(e, "Could not delete the session");
            }
          }}
        />
      )}
    </aside>
  );
}
