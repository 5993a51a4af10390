// Server-sent events as the v2 workflows endpoints frame them: a `data:` line (JSON), an `id:` line, a blank line.

/** Split an SSE body into the JSON of its data: lines (complete frames only; the rest stays buffered). */
export function takeFrames(buffer: string): { frames: unknown[]; rest: string } {
  const frames: unknown[] = [];
  let rest = buffer;
  let cut: number;
  while ((cut = rest.indexOf("\n\n")) >= 0) {
    const block = rest.slice(0, cut);
    rest = rest.slice(cut + 2);
    for (const line of block.split("\n")) if (line.startsWith("data: ")) frames.push(JSON.parse(line.slice(6)));
  }
  return { frames, rest };
}

/** The SSE frames of a response body, a batch (those of one read) at a time. */
export async function* frameBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const { frames, rest } = takeFrames(buffer + decoder.decode(value, { stream: true }));
    buffer = rest;
    yield frames;
  }
}

/** The run's events that end a followed job's stream (the reference framing's names). */
export const END_EVENTS = new Set(["end", "error", "suspended", "cancelled"]);
