// The MCP Tools node's server and tool picker: choose one of your MCP servers (Settings → MCP servers),
// then one of its tools; the tool's arguments become fields of the node (as the reference does).
import { useEffect, useState } from "react";
import { api, type McpServer, type McpTool } from "../api/client";
import { messageTextField } from "../lib/prompt";
import type { FrontendNode, TemplateField } from "../lib/types";
import { useEditor } from "./store";

/** The node's template with `tool` set to `tool` and one text field per argument of its schema. */
export function withTool(node: FrontendNode, server: string, tool: McpTool | null, tools: McpTool[]): FrontendNode {
  const template: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node.template)) {
    if (!(v as TemplateField)?.mcp_argument) template[k] = v; // drop the previous tool's arguments
  }
  const base = template.mcp_server as TemplateField;
  template.mcp_server = { ...base, value: { name: server } };
  const picker = template.tool as TemplateField;
  // hidden like the reference's, but read by the run (override_skip)
  template.tool = { ...picker, value: tool?.name ?? "", options: tools.map((t) => t.name), show: false, override_skip: true };
  const props = tool?.inputSchema?.properties ?? {};
  const required = new Set(tool?.inputSchema?.required ?? []);
  for (const [name, spec] of Object.entries(props)) {
    template[name] = messageTextField(name, { required: required.has(name), info: spec?.description ?? "", mcp_argument: true });
  }
  return { ...node, template } as FrontendNode;
}

export function McpServerField({ nodeId, node, field }: { nodeId: string; node: FrontendNode; field: TemplateField }) {
  const ed = useEditor();
  const [servers, setServers] = useState<McpServer[] | null>(null);
  const [tools, setTools] = useState<McpTool[] | null>(null);
  const [error, setError] = useState("");
  const value = field.value as { name?: string } | string | undefined;
  const server = typeof value === "string" ? value : value?.name ?? "";
  const tool = String((node.template.tool as TemplateField | undefined)?.value ?? "");

  useEffect(() => {
    api.mcpServers().then(setServers, () => setServers([]));
  }, []);

  useEffect(() => {
    setTools(null);
    setError("");
    if (!server) return;
    let live = true;
    api.mcpServerTools(server).then(
      (list) => live && setTools(list),
      (e) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [server]);

  const apply = (name: string, chosen: McpTool | null, list: McpTool[]) => ed.setNodeData(nodeId, { node: withTool(node, name, chosen, list) });

  return (
    <div className="mcp-field nodrag">
      <select
        aria-label="MCP server"
        value={server}
        onChange={(e) => apply(e.target.value, null, [])}
      >
        <option value="">{servers === null ? "Loading…" : servers.length ? "Choose a server…" : "No servers: add one in Settings"}</option>
        {(servers ?? []).map((s) => (
          <option key={s.id} value={s.name}>
            {s.name}
          </option>
        ))}
      </select>
      {server && (
        <select
          aria-label="MCP tool"
          value={tool}
          onChange={(e) => {
            const list = tools ?? [];
            apply(server, list.find((t) => t.name === e.target.value) ?? null, list);
          }}
        >
          <option value="">{tools === null ? (error ? "Could not list the tools" : "Loading tools…") : "Choose a tool…"}</option>
          {(tools ?? []).map((t) => (
            <option key={t.name} value={t.name} title={t.description}>
              {t.name}
            </option>
          ))}
        </select>
      )}
      {error && <p className="field-error small">{error}</p>}
      {tool && tools && <p className="muted small">{tools.find((t) => t.name === tool)?.description}</p>}
    </div>
  );
}
