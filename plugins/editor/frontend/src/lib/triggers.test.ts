import { describe, expect, it } from "vitest";
import { describeSchedule, formatDuration, formatWhen, policyBody, scheduleBody, signingSnippet, statusTone, timeZones, type ScheduleForm } from "./triggers";

const base: ScheduleForm = { flowId: "f1", name: "", kind: "interval", cron: "", timezone: "UTC", every: "5", unit: "min", inputValue: "", missed: "skip" };

describe("scheduleBody", () => {
  it("turns an interval and its unit into seconds", () => {
    expect(scheduleBody(base)).toEqual({ body: { flow_id: "f1", missed: "skip", interval_s: 300 } });
    expect(scheduleBody({ ...base, every: "2", unit: "d" })).toEqual({ body: { flow_id: "f1", missed: "skip", interval_s: 172800 } });
    expect(scheduleBody({ ...base, every: "1.5", unit: "min" })).toEqual({ body: { flow_id: "f1", missed: "skip", interval_s: 90 } });
  });
  it("refuses intervals that are empty, not positive, fractional seconds or over a year", () => {
    for (const every of ["", "0", "-3", "abc"]) expect(scheduleBody({ ...base, every })).toHaveProperty("error");
    expect(scheduleBody({ ...base, every: "1.5", unit: "s" })).toEqual({ error: "The interval must be a whole number of seconds." });
    expect(scheduleBody({ ...base, every: "366", unit: "d" })).toEqual({ error: "The interval is at most a year." });
  });
  it("sends a cron with its zone, spaces normalised, and the name, input and missed policy", () => {
    const got = scheduleBody({ ...base, kind: "cron", cron: "  0  9 * * 1-5 ", timezone: "Europe/Paris", name: " Morning ", inputValue: "hi", missed: "run_once" });
    expect(got).toEqual({ body: { flow_id: "f1", missed: "run_once", name: "Morning", input_value: "hi", cron: "0 9 * * 1-5", timezone: "Europe/Paris" } });
    expect(scheduleBody({ ...base, kind: "cron", cron: "*/10 * * * * *", timezone: "" })).toEqual({
      body: { flow_id: "f1", missed: "skip", cron: "*/10 * * * * *", timezone: "UTC" },
    });
  });
  it("refuses an empty cron and one with the wrong number of fields", () => {
    expect(scheduleBody({ ...base, kind: "cron", cron: " " })).toHaveProperty("error");
    expect(scheduleBody({ ...base, kind: "cron", cron: "0 9 * *" })).toHaveProperty("error");
    expect(scheduleBody({ ...base, kind: "cron", cron: "0 9 * * * * *" })).toHaveProperty("error");
  });
});

describe("formatting", () => {
  it("formats durations", () => {
    expect(formatDuration(null)).toBe("—");
    expect(formatDuration(-1)).toBe("—");
    expect(formatDuration(0.8504)).toBe("850 ms");
    expect(formatDuration(12.34)).toBe("12.3 s");
    expect(formatDuration(245)).toBe("4 min 05 s");
    expect(formatDuration(3 * 3600 + 7 * 60)).toBe("3 h 07 min");
  });
  it("formats times from epoch seconds and ISO strings, and absent or bad ones as a dash", () => {
    expect(formatWhen(null)).toBe("—");
    expect(formatWhen("not a date")).toBe("—");
    expect(formatWhen(1_700_000_000)).toBe(new Date(1_700_000_000_000).toLocaleString());
    expect(formatWhen("2026-01-01T09:00:00+00:00")).toBe(new Date(Date.UTC(2026, 0, 1, 9)).toLocaleString());
  });
  it("describes schedules", () => {
    expect(describeSchedule({ cron: "0 9 * * 1-5", interval_s: null, timezone: "Europe/Paris" })).toBe("cron 0 9 * * 1-5 (Europe/Paris)");
    expect(describeSchedule({ cron: null, interval_s: 300, timezone: "UTC" })).toBe("every 5 min");
    expect(describeSchedule({ cron: null, interval_s: 7200, timezone: "UTC" })).toBe("every 2 h");
    expect(describeSchedule({ cron: null, interval_s: 86400, timezone: "UTC" })).toBe("every 1 d");
    expect(describeSchedule({ cron: null, interval_s: 45, timezone: "UTC" })).toBe("every 45 s");
  });
  it("tones statuses", () => {
    expect(statusTone("ok")).toBe("ok");
    expect(statusTone("error")).toBe("error");
    expect(statusTone("cancelled")).toBe("error");
    expect(statusTone("queued")).toBe("muted");
  });
  it("lists UTC first, then known zones without duplicates", () => {
    const zones = timeZones();
    expect(zones[0]).toBe("UTC");
    expect(new Set(zones).size).toBe(zones.length);
    expect(zones.length).toBeGreaterThan(1);
  });
});

describe("signingSnippet", () => {
  const t = { ingress_url: "/api/v1/triggers/ingress/webhook/abc", signature_header: "X-Service-Signature", timestamp_header: "X-Service-Timestamp" };
  it("signs v1:{ts}: + body with the secret, against the full URL", () => {
    const s = signingSnippet(t, "http://host:7860");
    expect(s).toContain('requests.post("http://host:7860/api/v1/triggers/ingress/webhook/abc"');
    expect(s).toContain('f"v1:{ts}:".encode() + body');
    expect(s).toContain('os.environ["SERVICE_TRIGGER_SECRET"]');
    expect(s).toContain('"X-Service-Timestamp": ts, "X-Service-Signature": sig');
    expect(signingSnippet(t, "http://h", "sek")).toContain('secret = "sek"');
    expect(signingSnippet({ ...t, ingress_url: "https://x/y" }, "http://h")).toContain('requests.post("https://x/y"');
  });
});

describe("policyBody", () => {
  it("sends whole attempts, the backoff and the error flow (none as null)", () => {
    expect(policyBody("3", "2.5", "")).toEqual({ body: { attempts: 3, backoff_s: 2.5, error_flow_id: null } });
    expect(policyBody("1", "0", "f2")).toEqual({ body: { attempts: 1, backoff_s: 0, error_flow_id: "f2" } });
  });
  it("refuses attempts outside 1..10 or fractional, and a backoff outside 0..86400", () => {
    for (const a of ["", "0", "11", "1.5", "x"]) expect(policyBody(a, "10", "")).toHaveProperty("error");
    for (const b of ["", "-1", "86401", "x"]) expect(policyBody("2", b, "")).toHaveProperty("error");
  });
});
