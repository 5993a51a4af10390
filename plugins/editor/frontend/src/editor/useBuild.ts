/** The editor's builds: a canvas or Playground run, following a resumed run, stopping either. */
import { useCallback, useRef, useState } from "react";
import { api } from "../api/client";
import { notify, notifyError } from "../components/toast";
import type { ChatMessage } from "../lib/build";
import { ApiError } from "../lib/errors";
import { NdjsonParser, type BuildEvent } from "../lib/ndjson";
import { END_EVENTS, frameBatches } from "../lib/sse";
import type { FlowData } from "../lib/types";
import { initialBuild } from "../lib/build";
import type { BuildStore } from "./store";

/**
 * Open the event stream of a job. A job that is not found right after it was created is asked for again a few
 * times (a server with several processes may not know it everywhere at once); any other error is final.
 */
async function eventsWithRetry(jobId: string, signal: AbortSignal): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.buildEvents(jobId, signal);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404 || attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 150 * (attempt + 1)));
    }
  }
}

export function useBuild(buildStore: BuildStore, flowId: string, currentData: () => FlowData) {
  const [archive, setArchive] = useState<ChatMessage[]>([]);
  const [running, setRunning] = useState(false);
  const pausedJobRef = useRef<string | null>(null);
  const jobRef = useRef<string | null>(null);
  const abortRef = useRef<AbortController | null>(null);
  /** the running job is a resumed run (a v2 job), not a build job: stop it through the v2 API */
  const followingRef = useRef(false);

  const runBuild = useCallback(
    async (opts: { input?: string; session?: string; stopId?: string; files?: string[] }) => {
      if (jobRef.current) return notify("info", "A build is already running.");
      const prev = buildStore.state.messages;
      if (prev.length) setArchive((a) => [...a, ...prev]);
      buildStore.set({ ...initialBuild, running: true });
      setRunning(true);
      const abort = new AbortController();
      abortRef.current = abort;
      let finished = false;
      try {
        const body = {
          // From the canvas (Run, a node's ▷) no input value is sent, as in the reference: the Chat Input's own
          // field is what runs. The playground always sends what was typed there.
          inputs: { ...(opts.input !== undefined ? { input_value: opts.input } : {}), session: opts.session ?? flowId },
          data: currentData(),
          ...(opts.files?.length ? { files: opts.files } : {}),
        };
        const { job_id } = await api.startBuild(flowId, body, { stop_component_id: opts.stopId });
        jobRef.current = job_id;
        const res = await eventsWithRetry(job_id, abort.signal);
        if (!res.body) throw new Error("The server sent no events.");
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        const parser = new NdjsonParser();
        const handle = (evs: ReturnType<NdjsonParser["push"]>) => {
          for (const ev of evs) {
            buildStore.apply(ev);
            if (ev.event === "suspended") pausedJobRef.current = job_id;
            if (ev.event === "end" || ev.event === "error" || ev.event === "suspended") finished = true;
          }
        };
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          handle(parser.push(decoder.decode(value, { stream: true })));
          if (finished) break;
        }
        handle(parser.flush());
        if (!finished && !abort.signal.aborted) buildStore.apply({ event: "error", data: { text: "The event stream ended before the build finished." } });
        const err = buildStore.state.error;
        if (err) notify("error", `Build failed: ${err}`);
      } catch (e) {
        if ((e as Error).name === "AbortError") buildStore.apply({ event: "error", data: { text: "Build stopped." } });
        else {
          buildStore.apply({ event: "error", data: { text: (e as Error).message } });
          notifyError(e, "Build failed");
        }
      } finally {
        jobRef.current = null;
        abortRef.current = null;
        if (buildStore.state.running) buildStore.set({ ...buildStore.state, running: false });
        setRunning(false);
      }
    },
    [buildStore, flowId, currentData],
  );

  /**
   * Follow the job a resumed run goes on in (``POST /api/v2/workflows/{job}/resume`` answers with it):
   * its events in the reference framing feed the same build state, so the playground shows the streamed
   * tokens, the tool calls and the answer, or the next approval card when the run pauses again.
   */
  const followJob = useCallback(
    async (job_id: string) => {
      buildStore.set({ ...buildStore.state, pending: undefined, running: true, error: undefined });
      setRunning(true);
      const abort = new AbortController();
      abortRef.current = abort;
      jobRef.current = job_id;
      followingRef.current = true;
      let finished = false;
      try {
        const res = await api.workflowEvents(job_id, abort.signal);
        if (!res.body) throw new Error("The server sent no events.");
        for await (const frames of frameBatches(res.body)) {
          for (const f of frames as BuildEvent[]) {
            if (!f || typeof f.event !== "string") continue;
            if (f.event === "cancelled") buildStore.apply({ event: "error", data: { text: "Run stopped." } });
            else buildStore.apply({ event: f.event, data: f.data ?? {} });
            if (f.event === "suspended") pausedJobRef.current = job_id;
            if (END_EVENTS.has(f.event)) finished = true;
          }
          if (finished) break;
        }
        if (!finished && !abort.signal.aborted) buildStore.apply({ event: "error", data: { text: "The event stream ended before the run finished." } });
        const err = buildStore.state.error;
        if (err) notify("error", `Run failed: ${err}`);
      } catch (e) {
        if ((e as Error).name === "AbortError") buildStore.apply({ event: "error", data: { text: "Run stopped." } });
        else {
          buildStore.apply({ event: "error", data: { text: (e as Error).message } });
          notifyError(e, "Could not follow the resumed run");
        }
      } finally {
        jobRef.current = null;
        abortRef.current = null;
        followingRef.current = false;
        if (buildStore.state.running) buildStore.set({ ...buildStore.state, running: false });
        setRunning(false);
      }
    },
    [buildStore],
  );

  const stopBuild = useCallback(async () => {
    const job = jobRef.current;
    if (job) {
      try {
        if (followingRef.current) await api.stopWorkflow(job);
        else await api.cancelBuild(job);
      } catch (e) {
        notifyError(e, "Could not stop the build");
      }
    }
    abortRef.current?.abort();
  }, []);

  return { running, archive, pausedJobRef, runBuild, followJob, stopBuild };
}
