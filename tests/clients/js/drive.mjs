// Drives every call of the reference's published JS client (@datastax/langflow-client) against a live
// server and prints what each returned as one JSON object (read by tests/clients/test_js_client.py).
// Environment: SERVICE_URL, SERVICE_API_KEY, FLOW_ID. While the log stream is open a flow naming a component
// that is not installed is uploaded: the server logs a warning, which the stream then carries.
import { LangflowClient } from "@datastax/langflow-client";
import { LangflowError } from "@datastax/langflow-client/errors";

const { SERVICE_URL, SERVICE_API_KEY, FLOW_ID } = process.env;
const client = new LangflowClient({ baseUrl: SERVICE_URL, apiKey: SERVICE_API_KEY });
// The client's logs calls build their headers with Node's global Headers, which its request code does not
// recognise as undici's: the API key lands on a copy and the request goes out without it (403 here and on the
// reference, unless auto-login skips authentication). A fetch that adds the key shows the endpoints themselves.
const keyed = new LangflowClient({
  baseUrl: SERVICE_URL,
  apiKey: SERVICE_API_KEY,
  fetch: (url, init = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("x-api-key")) headers.set("x-api-key", SERVICE_API_KEY);
    return fetch(url, { ...init, headers });
  },
});
const out = {};

async function step(name, fn) {
  try {
    out[name] = await fn();
  } catch (error) {
    const status = error instanceof LangflowError ? error.cause?.status : undefined;
    out[name] = { error: String(error?.message ?? error), status, kind: error?.constructor?.name };
  }
}

const flow = client.flow(FLOW_ID);

await step("run", async () => {
  const response = await flow.run("hello from js", { session_id: "js-session" });
  return { text: response.chatOutputText(), sessionId: response.sessionId };
});

await step("run_tweaked", async () => {
  const response = await flow.tweak("ChatOutput-BBBBB", { sender_name: "Tweaked" }).run("tweak me");
  return { text: response.chatOutputText(), senderName: response.outputs[0]?.outputs[0]?.results?.message?.sender_name };
});

await step("stream", async () => {
  const events = [];
  for await (const event of await flow.stream("streamed hello")) {
    events.push(event.event);
    if (event.event === "end") {
      const result = event.data.result;
      events.push(result.outputs[0].outputs[0].results.message.text);
    }
  }
  return events;
});

await step("upload_file", async () => {
  const file = new File([new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10])], "pixel.png", { type: "image/png" });
  const uploaded = await flow.uploadFile(file);
  return { flowId: uploaded.flowId, filePath: uploaded.filePath };
});

await step("files_upload", async () => {
  const file = new File(["some notes"], "notes.txt", { type: "text/plain" });
  const stored = await client.files.upload(file);
  return { id: stored.id, name: stored.name, path: stored.path, size: stored.size, created: String(stored.created_at) };
});

await step("files_list", async () => {
  const files = await client.files.list();
  return files.map((f) => f.name);
});

await step("logs_fetch_as_published", async () => {
  await client.logs.fetch({ lines_before: 5 });
  return "no error";
});

await step("logs_fetch", async () => {
  const logs = await keyed.logs.fetch({ lines_before: 5 });
  return logs.map((log) => ({ ms: log.timestamp.getTime(), message: log.message }));
});

await step("logs_stream", async () => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 15000);
  const stream = await keyed.logs.stream({ signal: controller.signal });
  const form = new FormData();
  const document = { name: "Missing", data: { nodes: [{ id: "Nope-1", data: { type: "NoSuchComponent", node: {} } }], edges: [] } };
  form.append("file", new Blob([JSON.stringify(document)], { type: "application/json" }), "missing.json");
  await fetch(`${SERVICE_URL}/api/v1/flows/upload/`, { method: "POST", body: form, headers: { "x-api-key": SERVICE_API_KEY } });
  const seen = [];
  try {
    for await (const log of stream) {
      seen.push({ ms: log.timestamp.getTime(), message: log.message });
      break;
    }
  } catch (error) {
    if (error?.name !== "AbortError") throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return seen;
});

await step("run_unknown_flow", async () => {
  await client.flow("00000000-0000-0000-0000-000000000000").run("x");
  return "no error";
});

process.stdout.write(JSON.stringify(out));
process.exit(0);
