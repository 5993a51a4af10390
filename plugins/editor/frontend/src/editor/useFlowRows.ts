// One flow's rows of a triggers list (schedules, signed webhooks): loaded on mount and when the flow changes
// (only the newest load applies its answer: lib/latest), and `act`, which runs a change, says it is done,
// then loads again. Shared by the Schedules and Webhooks tabs.
import { useEffect, useMemo, useState } from "react";
import { request } from "../api/client";
import { notify } from "../components/toast";
import { latestOnly } from "../lib/latest";

export interface FlowRows<T> {
  rows: T[] | null;
  error: string | null;
  setError: (error: string | null) => void;
  busy: boolean;
  load: () => Promise<void>;
  /** run `fn`, toast `done`, reload; its result, or null when it failed (the error is shown) */
  act: <R>(fn: () => Promise<R>, done: string) => Promise<R | null>;
}

export function useFlowRows<T>(path: string, flowId: string): FlowRows<T> {
  const [rows, setRows] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const startLoad = useMemo(latestOnly, []);

  const load = async () => {
    const isNewest = startLoad();
    try {
      const got = await request<T[]>(path, { query: { flow_id: flowId } });
      if (isNewest()) setRows(got);
    } catch (e) {
      if (isNewest()) setError((e as Error).message);
    }
  };
  useEffect(() => {
    void load();
  }, [path, flowId]);

  const act = async <R,>(fn: () => Promise<R>, done: string): Promise<R | null> => {
    setBusy(true);
    setError(null);
    try {
      const got = await fn();
      notify("success", done);
      await load();
      return got;
    } catch (e) {
      setError((e as Error).message);
      return null;
    } finally {
      setBusy(false);
    }
  };

  return { rows, error, setError, busy, load, act };
}
