// Ready-to-copy snippets for the run endpoint and the webhook.

export interface SnippetInput {
  baseUrl: string;
  flowId: string;
  endpointName?: string | null;
  apiKey?: string;
  inputValue?: string;
  sessionId?: string;
  tweaks?: Record<string, unknown>;
}

export interface Snippets {
  runUrl: string;
  webhookUrl: string;
  body: Record<string, unknown>;
  curl: string;
  python: string;
  javascript: string;
  webhookCurl: string;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function makeSnippets(i: SnippetInput): Snippets {
  const ident = i.endpointName || i.flowId;
  const base = i.baseUrl.replace(/\/+$/, "");
  const runUrl = `${base}/api/v1/run/${encodeURIComponent(ident)}`;
  const webhookUrl = `${base}/api/v1/webhook/${encodeURIComponent(ident)}`;
  const key = i.apiKey || "$SERVICE_API_KEY";
  const body: Record<string, unknown> = {
    input_value: i.inputValue ?? "hello world!",
    input_type: "chat",
    output_type: "chat",
    session_id: i.sessionId || crypto_random_session(),
  };
  if (i.tweaks && Object.keys(i.tweaks).length) body.tweaks = i.tweaks;
  const json = JSON.stringify(body, null, 2);
  const keyHeader = i.apiKey ? `x-api-key: ${i.apiKey}` : `x-api-key: $SERVICE_API_KEY`;
  const curl = [
    `curl -X POST ${shellQuote(runUrl)} \\`,
    `  -H 'Content-Type: application/json' \\`,
    i.apiKey ? `  -H ${shellQuote(keyHeader)} \\` : `  -H "${keyHeader}" \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join("\n");
  const python = [
    "import requests",
    "",
    `url = ${JSON.stringify(runUrl)}`,
    `api_key = ${i.apiKey ? JSON.stringify(i.apiKey) : 'os.environ["SERVICE_API_KEY"]'}`,
    `payload = ${pyLiteral(body)}`,
    "",
    'response = requests.post(url, json=payload, headers={"x-api-key": api_key}, timeout=60)',
    "response.raise_for_status()",
    'print(response.json()["outputs"][0]["outputs"][0]["results"]["message"]["text"])',
  ];
  if (!i.apiKey) python.unshift("import os");
  const javascript = [
    `const url = ${JSON.stringify(runUrl)};`,
    `const apiKey = ${i.apiKey ? JSON.stringify(i.apiKey) : "process.env.SERVICE_API_KEY"};`,
    `const payload = ${json};`,
    "",
    "const response = await fetch(url, {",
    '  method: "POST",',
    '  headers: { "Content-Type": "application/json", "x-api-key": apiKey },',
    "  body: JSON.stringify(payload),",
    "});",
    "if (!response.ok) throw new Error(`Run failed: ${response.status}`);",
    "const result = await response.json();",
    "console.log(result.outputs[0].outputs[0].results.message.text);",
  ].join("\n");
  const webhookCurl = [
    `curl -X POST ${shellQuote(webhookUrl)} \\`,
    `  -H 'Content-Type: application/json' \\`,
    i.apiKey ? `  -H ${shellQuote(keyHeader)} \\` : `  -H "${keyHeader}" \\`,
    `  -d '{"any": "JSON body"}'`,
  ].join("\n");
  void key;
  return { runUrl, webhookUrl, body, curl, python: python.join("\n"), javascript, webhookCurl };
}

/** A Python literal for JSON-like data (True/False/None). */
export function pyLiteral(v: unknown, indent = 0): string {
  const pad = "    ".repeat(indent + 1);
  const end = "    ".repeat(indent);
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return v.length ? `[\n${v.map((x) => pad + pyLiteral(x, indent + 1)).join(",\n")}\n${end}]` : "[]";
  const entries = Object.entries(v as Record<string, unknown>);
  if (!entries.length) return "{}";
  return `{\n${entries.map(([k, x]) => `${pad}${JSON.stringify(k)}: ${pyLiteral(x, indent + 1)}`).join(",\n")}\n${end}}`;
}

function crypto_random_session(): string {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return `session-${Date.now()}`;
}

export interface V2Snippets {
  url: string;
  curl: string;
  python: string;
  javascript: string;
}

/** The same flow through the v2 workflows API: sync, streamed (AG-UI) and in the background. */
export function makeV2Snippets(i: SnippetInput): V2Snippets {
  const base = i.baseUrl.replace(/\/+$/, "");
  const url = `${base}/api/v2/workflows`;
  const keyHeader = i.apiKey ? `x-api-key: ${i.apiKey}` : `x-api-key: $SERVICE_API_KEY`;
  const body: Record<string, unknown> = {
    flow_id: i.flowId,
    input_value: i.inputValue ?? "hello world!",
    session_id: i.sessionId || crypto_random_session(),
    mode: "sync",
  };
  if (i.tweaks && Object.keys(i.tweaks).length) body.tweaks = i.tweaks;
  const header = i.apiKey ? `  -H ${shellQuote(keyHeader)} \\` : `  -H "${keyHeader}" \\`;
  const curlFor = (extra: Record<string, unknown>, stream = false) =>
    [`curl ${stream ? "-N " : ""}-X POST ${shellQuote(url)} \\`, `  -H 'Content-Type: application/json' \\`, header, `  -d ${shellQuote(JSON.stringify({ ...body, ...extra }))}`].join("\n");
  const curl = [
    "# sync: the v2 response object",
    curlFor({}),
    "",
    "# stream as AG-UI events (or \"stream_protocol\": \"service\" for the reference framing)",
    curlFor({ mode: "stream", stream_protocol: "agui" }, true),
    "",
    "# background: a job; poll links.status, re-attach to links.events, stop with links.stop",
    curlFor({ mode: "background" }),
  ].join("\n");
  const python = [
    ...(i.apiKey ? [] : ["import os"]),
    "import requests",
    "",
    `url = ${JSON.stringify(url)}`,
    `headers = {"x-api-key": ${i.apiKey ? JSON.stringify(i.apiKey) : 'os.environ["SERVICE_API_KEY"]'}}`,
    `payload = ${pyLiteral(body)}`,
    "",
    "# sync",
    "result = requests.post(url, json=payload, headers=headers, timeout=60).json()",
    'print(result["output"]["text"])',
    "",
    "# stream (AG-UI events, one JSON object per data: line)",
    'with requests.post(url, json={**payload, "mode": "stream", "stream_protocol": "agui"}, headers=headers, stream=True) as r:',
    "    for line in r.iter_lines(decode_unicode=True):",
    '        if line.startswith("data: "):',
    "            print(line[6:])",
  ].join("\n");
  const javascript = [
    `const url = ${JSON.stringify(url)};`,
    `const headers = { "Content-Type": "application/json", "x-api-key": ${i.apiKey ? JSON.stringify(i.apiKey) : "process.env.SERVICE_API_KEY"} };`,
    `const payload = ${JSON.stringify(body, null, 2)};`,
    "",
    "// sync",
    "const result = await (await fetch(url, { method: \"POST\", headers, body: JSON.stringify(payload) })).json();",
    "console.log(result.output.text);",
    "",
    "// background: start, then poll the status link until it is no longer queued or in progress",
    "const job = await (await fetch(url, { method: \"POST\", headers, body: JSON.stringify({ ...payload, mode: \"background\" }) })).json();",
    "let status;",
    "do {",
    "  await new Promise((r) => setTimeout(r, 500));",
    "  status = await (await fetch(new URL(job.links.status, url), { headers })).json();",
    "} while (status.status === \"queued\" || status.status === \"in_progress\");",
    "console.log(status.output.text);",
  ].join("\n");
  return { url, curl, python, javascript };
}
