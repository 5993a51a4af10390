// The reference's message logs of a flow: every stored message of its sessions in a table, newest first;
// a message's text edited in place (the server marks it edited), copied, deleted (one or the selected ones),
// and a thumbs up/down on the flow's answers (``properties.positive_feedback``, as the reference stores it).
import { useCallback, useEffect, useMemo, useState } from "react";
import type { MonitorMessage } from "../api/client";
import { pagesApi } from "../api/pages";
import { copyText } from "../components/CopyButton";
import { Modal } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { Icon } from "../components/Icon";

type Feedback = boolean | null;

function feedbackOf(m: MonitorMessage): Feedback {
  const v = (m.properties as { positive_feedback?: unknown } | undefined)?.positive_feedback;
  return v === true || v === false ? v : null;
}

export function MessageLogs({ flowId, flowName, onClose, onChanged }: { flowId: string; flowName?: string; onClose: () => void; onChanged?: () => void }) {
  const [rows, setRows] = useState<MonitorMessage[] | null>(null);
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [search, setSearch] = useState("");

  const load = useCallback(async () => {
    try {
      setRows(await pagesApi.flowMessages(flowId));
    } catch (e) {
      notifyError(e, "Could not load the messages");
      setRows([]);
    }
  }, [flowId]);
  useEffect(() => {
    void load();
  }, [load]);

  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    return (rows ?? []).filter((m) => !q || (m.text ?? "").toLowerCase().includes(q) || m.session_id.toLowerCase().includes(q) || (m.sender_name ?? "").toLowerCase().includes(q));
  }, [rows, search]);

  async function save(m: MonitorMessage, patch: { text?: string; properties?: Record<string, unknown> }, done: string) {
    try {
      const updated = await pagesApi.updateMessage(m.id, patch);
      setRows((list) => (list ?? []).map((x) => (x.id === m.id ? { ...x, ...updated } : x)));
      notify("success", done);
      onChanged?.();
    } catch (e) {
      notifyError(e, "Could not update the message");
    }
  }

  async function remove(ids: string[]) {
    try {
      await pagesApi.deleteMessages(ids);
      setSelected(new Set());
      notify("success", ids.length === 1 ? "Message deleted." : `${ids.length} messages deleted.`);
      await load();
      onChanged?.();
    } catch (e) {
      notifyError(e, "Could not delete the messages");
    }
  }

  const toggle = (id: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  return (
    <Modal title={`Message logs${flowName ? ` · ${flowName}` : ""}`} onClose={onClose} wide testId="message-logs">
      <div className="table-toolbar">
        <input type="search" className="search" placeholder="Search messages" aria-label="Search messages" value={search} onChange={(e) => setSearch(e.target.value)} />
        <button className="btn btn-small btn-danger-text" disabled={!selected.size} onClick={() => void remove([...selected])}>
          Delete selected{selected.size ? ` (${selected.size})` : ""}
        </button>
      </div>
      <div className="logs-modal-body">
        {rows === null ? (
          <p className="muted">Loading…</p>
        ) : shown.length === 0 ? (
          <p className="muted">{search ? `No message matches “${search}”.` : "No messages yet: run the flow in the Playground."}</p>
        ) : (
          <table className="data-table" aria-label="Messages">
            <thead>
              <tr>
                <th scope="col">
                  <span className="sr-only">Select</span>
                </th>
                <th scope="col">Time</th>
                <th scope="col">Session</th>
                <th scope="col">Sender</th>
                <th scope="col">Text</th>
                <th scope="col">Feedback</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((m) => {
                const fb = feedbackOf(m);
                const answer = m.sender !== "User";
                return (
                  <tr key={m.id} className={m.error ? "row-error" : undefined} data-testid="message-row">
                    <td>
                      <input type="checkbox" aria-label={`Select the message of ${new Date(m.timestamp).toLocaleString()}`} checked={selected.has(m.id)} onChange={(e) => toggle(m.id, e.target.checked)} />
                    </td>
                    <td className="small">{new Date(m.timestamp).toLocaleString()}</td>
                    <td className="small">{m.session_id === flowId ? "Default session" : m.session_id}</td>
                    <td>
                      {m.sender_name || m.sender}
                      {m.error && <span className="badge">error</span>}
                      {!!m.edit && <span className="badge">edited</span>}
                    </td>
                    <td className="cell-text">
                      {editing?.id === m.id ? (
                        <form
                          onSubmit={(e) => {
                            e.preventDefault();
                            const text = editing.text;
                            setEditing(null);
                            void save(m, { text }, "Message saved.");
                          }}
                        >
                          <textarea aria-label="Message text" rows={3} value={editing.text} autoFocus onChange={(e) => setEditing({ id: m.id, text: e.target.value })} />
                          <div className="row">
                            <button type="submit" className="btn btn-small btn-primary">
                              Save
                            </button>
                            <button type="button" className="btn btn-small" onClick={() => setEditing(null)}>
                              Cancel
                            </button>
                          </div>
                        </form>
                      ) : (
                        m.text
                      )}
                    </td>
                    <td className="actions">
                      {answer && (
                        <>
                          <button
                            className={`icon-btn${fb === true ? " feedback-on" : ""}`}
                            aria-label="Good answer"
                            aria-pressed={fb === true}
                            title="Good answer"
                            onClick={() => void save(m, { properties: { ...(m.properties as object), positive_feedback: fb === true ? null : true } }, "Feedback saved.")}
                          >
                            <Icon name="thumbsUp" />
                          </button>
                          <button
                            className={`icon-btn${fb === false ? " feedback-on" : ""}`}
                            aria-label="Bad answer"
                            aria-pressed={fb === false}
                            title="Bad answer"
                            onClick={() => void save(m, { properties: { ...(m.properties as object), positive_feedback: fb === false ? null : false } }, "Feedback saved.")}
                          >
                            <Icon name="thumbsDown" />
                          </button>
                        </>
                      )}
                    </td>
                    <td className="actions">
                      <button className="btn btn-small" onClick={() => setEditing({ id: m.id, text: m.text ?? "" })}>
                        Edit
                      </button>{" "}
                      <button className="btn btn-small" onClick={async () => ((await copyText(m.text ?? "")) ? notify("success", "Copied.") : notify("error", "Could not copy."))}>
                        Copy
                      </button>{" "}
                      <button className="btn btn-small btn-danger-text" onClick={() => void remove([m.id])}>
                        Delete
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </div>
    </Modal>
  );
}
