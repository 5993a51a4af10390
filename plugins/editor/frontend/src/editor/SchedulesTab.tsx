// The schedules of one flow: list with the next five fire times, create (cron + zone, or an interval), pause, resume, delete.
import { useMemo, useState } from "react";
import { request } from "../api/client";
import { ConfirmDialog } from "../components/Modal";
import { useFlowRows } from "./useFlowRows";
import { describeSchedule, formatWhen, scheduleBody, timeZones, type Schedule, type ScheduleForm } from "../lib/triggers";

function emptyForm(flowId: string): ScheduleForm {
  return { flowId, name: "", kind: "interval", cron: "", timezone: "UTC", every: "1", unit: "h", inputValue: "", missed: "skip" };
}

export function SchedulesTab(props: { flowId: string }) {
  const { rows, error, setError, busy, act } = useFlowRows<Schedule>("/api/v1/schedules", props.flowId);
  const [form, setForm] = useState<ScheduleForm | null>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const zones = useMemo(timeZones, []);

  const create = async () => {
    if (!form) return;
    const made = scheduleBody(form);
    if ("error" in made) {
      setError(made.error);
      return;
    }
    if ((await act(() => request("/api/v1/schedules", { method: "POST", json: made.body }), "Schedule created")) !== null) setForm(null);
  };
  const set = (patch: Partial<ScheduleForm>) => form && setForm({ ...form, ...patch });

  return (
    <div data-testid="schedules-tab">
      {error && <p className="form-error" role="alert">{error}</p>}
      {form ? (
        <form
          className="schedule-form"
          aria-label="New schedule"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void create();
          }}
        >
          <label className="field">
            <span>Name (optional)</span>
            <input aria-label="Schedule name" value={form.name} onChange={(e) => set({ name: e.target.value })} />
          </label>
          <fieldset className="field">
            <legend>Runs</legend>
            <label className="inline-check">
              <input type="radio" name="schedule-kind" checked={form.kind === "interval"} onChange={() => set({ kind: "interval" })} /> Every
            </label>
            <label className="inline-check">
              <input type="radio" name="schedule-kind" checked={form.kind === "cron"} onChange={() => set({ kind: "cron" })} /> On a cron expression
            </label>
          </fieldset>
          {form.kind === "interval" ? (
            <div className="field-row">
              <label className="field">
                <span>Every</span>
                <input aria-label="Interval" type="number" min={1} step="any" value={form.every} onChange={(e) => set({ every: e.target.value })} />
              </label>
              <label className="field">
                <span>Unit</span>
                <select aria-label="Interval unit" value={form.unit} onChange={(e) => set({ unit: e.target.value as ScheduleForm["unit"] })}>
                  <option value="s">seconds</option>
                  <option value="min">minutes</option>
                  <option value="h">hours</option>
                  <option value="d">days</option>
                </select>
              </label>
            </div>
          ) : (
            <div className="field-row">
              <label className="field">
                <span>Cron (minute hour day month weekday)</span>
                <input aria-label="Cron expression" className="mono" placeholder="0 9 * * 1-5" value={form.cron} onChange={(e) => set({ cron: e.target.value })} />
              </label>
              <label className="field">
                <span>Time zone</span>
                <select aria-label="Time zone" value={form.timezone} onChange={(e) => set({ timezone: e.target.value })}>
                  {zones.map((z) => (
                    <option key={z} value={z}>
                      {z}
                    </option>
                  ))}
                </select>
              </label>
            </div>
          )}
          <label className="field">
            <span>Input value</span>
            <textarea aria-label="Schedule input value" rows={2} value={form.inputValue} onChange={(e) => set({ inputValue: e.target.value })} />
          </label>
          <label className="field">
            <span>When the service was down over a tick</span>
            <select aria-label="Missed runs" value={form.missed} onChange={(e) => set({ missed: e.target.value as ScheduleForm["missed"] })}>
              <option value="skip">skip the missed runs</option>
              <option value="run_once">run once for all of them</option>
            </select>
          </label>
          <div className="modal-actions">
            <button type="button" className="btn" onClick={() => setForm(null)}>
              Cancel
            </button>
            <button type="submit" className="btn btn-primary" disabled={busy}>
              Create schedule
            </button>
          </div>
        </form>
      ) : (
        <div className="modal-actions">
          <button className="btn btn-primary" onClick={() => setForm(emptyForm(props.flowId))}>
            New schedule
          </button>
        </div>
      )}
      {rows === null ? (
        <p aria-busy="true">Loading…</p>
      ) : rows.length === 0 ? (
        !form && <p className="muted">No schedules: this flow runs only when something calls it.</p>
      ) : (
        <ul className="automation-list" data-testid="schedules-list">
          {rows.map((s) => (
            <li key={s.id} className="automation-item" data-testid="schedule-row">
              <div className="section-head">
                <div>
                  <strong>{s.name}</strong> <span className={`pill ${s.enabled ? "pill-ok" : "pill-muted"}`}>{s.enabled ? "active" : "paused"}</span>
                  <div className="muted small">
                    {describeSchedule(s)}
                    {s.input_value ? ` · input “${s.input_value.length > 40 ? `${s.input_value.slice(0, 40)}…` : s.input_value}”` : ""}
                    {s.last_fired_at ? ` · last run ${formatWhen(s.last_fired_at)}` : ""}
                  </div>
                </div>
                <div className="row-actions">
                  <button
                    className="btn btn-small"
                    disabled={busy}
                    onClick={() => void act(() => request(`/api/v1/schedules/${s.id}`, { method: "PATCH", json: { enabled: !s.enabled } }), s.enabled ? "Schedule paused" : "Schedule resumed")}
                  >
                    {s.enabled ? "Pause" : "Resume"}
                  </button>
                  <button className="btn btn-small btn-danger" disabled={busy} onClick={() => setDeleting(s)} aria-label={`Delete schedule ${s.name}`}>
                    Delete
                  </button>
                </div>
              </div>
              {s.enabled && s.next_fire_times.length > 0 ? (
                <div>
                  <span className="muted small">Next runs:</span>
                  <ol className="fire-times" data-testid="schedule-next-times">
                    {s.next_fire_times.slice(0, 5).map((t) => (
                      <li key={t}>
                        <time dateTime={t}>{formatWhen(t)}</time>
                      </li>
                    ))}
                  </ol>
                </div>
              ) : (
                <p className="muted small">{s.enabled ? "No further runs." : "Paused: resume it to run again."}</p>
              )}
            </li>
          ))}
        </ul>
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete schedule"
          text={`Delete the schedule “${deleting.name}”? The flow stops running on it.`}
          confirmLabel="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={() => {
            const s = deleting;
            setDeleting(null);
            void act(() => request(`/api/v1/schedules/${s.id}`, { method: "DELETE" }), "Schedule deleted");
          }}
        />
      )}
    </div>
  );
}
