import { describe, expect, it } from "vitest";
import { formatMs, periodStart } from "./monitor";

describe("monitor helpers", () => {
  it("formats durations", () => {
    expect(formatMs(null)).toBe("—");
    expect(formatMs(12.4)).toBe("12 ms");
    expect(formatMs(1234)).toBe("1.23 s");
    expect(formatMs(65000)).toBe("65.0 s");
  });
  it("starts periods on UTC days and months, as budgets count", () => {
    const now = new Date("2026-03-15T18:30:00Z");
    expect(periodStart("today", now)).toBe("2026-03-15T00:00:00.000Z");
    expect(periodStart("7d", now)).toBe("2026-03-09T00:00:00.000Z");
    expect(periodStart("30d", now)).toBe("2026-02-14T00:00:00.000Z");
    expect(periodStart("month", now)).toBe("2026-03-01T00:00:00.000Z");
    expect(periodStart("all", now)).toBeNull();
  });
});
