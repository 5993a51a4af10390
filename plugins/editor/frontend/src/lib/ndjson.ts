// Incremental parser for the build-event stream: JSON objects separated by blank lines (application/x-ndjson).

export interface BuildEvent {
  event: string;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export class NdjsonParser {
  private buffer = "";

  /** Feed a chunk of text; returns the complete events it finished. */
  push(chunk: string): BuildEvent[] {
    this.buffer += chunk;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop() ?? "";
    return lines.flatMap((l) => parseLine(l));
  }

  /** The end of the stream: parse whatever is left. */
  flush(): BuildEvent[] {
    const rest = this.buffer;
    this.buffer = "";
    return parseLine(rest);
  }
}

function parseLine(line: string): BuildEvent[] {
  const t = line.trim();
  if (!t) return [];
  try {
    const obj = JSON.parse(t);
    if (obj && typeof obj === "object" && typeof obj.event === "string") return [{ event: obj.event, data: obj.data ?? {} }];
    return [];
  } catch {
    return [{ event: "error", data: { text: `Unreadable event from the server: ${t.slice(0, 120)}` } }];
  }
}

export function parseAll(text: string): BuildEvent[] {
  const p = new NdjsonParser();
  return [...p.push(text), ...p.flush()];
}
