// The public HTTP API, with cookie sessions (HttpOnly cookies set by the server) and one refresh on 401.
import { ApiError, describeError } from "../lib/errors";
import type { ExtensionEvents } from "../lib/extensions";
import type { Catalog, FlowData, FlowRecord, Project } from "../lib/types";

type Json = Record<string, unknown> | unknown[];

let onSignedOut: (() => void) | null = null;
export function setSignedOutHandler(fn: () => void) {
  onSignedOut = fn;
}

let refreshing: Promise<boolean> | null = null;
async function refreshSession(): Promise<boolean> {
  if (!refreshing) {
    refreshing = fetch("/api/v1/refresh", { method: "POST", credentials: "same-origin" })
      .then((r) => r.ok)
      .catch(() => false)
      .finally(() => setTimeout(() => (refreshing = null), 0));
  }
  return refreshing;
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  form?: Record<string, string>;
  body?: BodyInit;
  query?: Record<string, string | number | boolean | undefined | null>;
  raw?: boolean; // return the Response
  noRefresh?: boolean;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

function url(path: string, query?: RequestOptions["query"]): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes("?") ? "&" : "?"}${s}` : path;
}

export async function request<T = unknown>(path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", ...(opts.headers ?? {}) };
  let body: BodyInit | undefined = opts.body;
  if (opts.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(opts.form).toString();
  }
  const init: RequestInit = { method: opts.method ?? "GET", headers, body, credentials: "same-origin", signal: opts.signal };
  let res: Response;
  try {
    res = await fetch(url(path, opts.query), init);
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError(0, "The server cannot be reached. Check that it is running and your network.");
  }
  if (!res.ok) {
    let parsed: unknown = undefined;
    const text = await res.text().catch(() => "");
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    // an expired access token (401), or an access cookie that is gone (403 "No authentication credentials")
    const detail = parsed && typeof parsed === "object" ? (parsed as { detail?: unknown }).detail : undefined;
    const noCredentials = res.status === 403 && typeof detail === "string" && /no authentication credentials/i.test(detail);
    if ((res.status === 401 || noCredentials) && !opts.noRefresh && opts.body === undefined) {
      if (await refreshSession()) return request<T>(path, { ...opts, noRefresh: true });
      onSignedOut?.();
    } else if ((res.status === 401 || noCredentials) && !opts.noRefresh) {
      // a streamed body (file upload) cannot be sent twice: refresh for the next call, report this one
      if (!(await refreshSession())) onSignedOut?.();
    }
    throw new ApiError(res.status, describeError(res.status, parsed), parsed);
  }
  if (opts.raw) return res as unknown as T;
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    return text as unknown as T;
  }
}

// ---- accounts -----------------------------------------------------------------------------------------

export interface User {
  id: string;
  username: string;
  is_superuser?: boolean;
  is_active?: boolean;
  [key: string]: unknown;
}

export interface Config {
  type?: string;
  auto_saving?: boolean;
  auto_saving_interval?: number;
  event_delivery?: string;
  max_file_size_upload?: number;
  hide_logout_button?: boolean;
  hide_new_flow_button?: boolean;
  hide_new_project_button?: boolean;
  hide_starter_projects?: boolean;
  webhook_auth_enable?: boolean;
  default_folder_name?: string;
  [key: string]: unknown;
}

export interface SsoProvider {
  slug: string;
  display_name: string;
  login_url: string;
}

export interface SsoProviders {
  providers: SsoProvider[];
  sso_only: boolean;
}

export interface Team {
  id: string;
  team_name: string;
  adom_name: string;
  description: string | null;
  is_active: boolean;
}

export interface TeamMember {
  id: string;
  team_id: string;
  user_id: string;
  source: string;
}

export interface Share {
  id: string;
  resource_type: string;
  resource_id: string;
  scope: string;
  target_id: string | null;
  target_name: string | null;
  permission_level: string;
}

export const api = {
  config: () => request<Config>("/api/v1/config"),
  session: () => request<{ authenticated: boolean }>("/api/v1/session", { noRefresh: true }),
  whoami: () => request<User>("/api/v1/users/whoami", { noRefresh: false }),
  login: (username: string, password: string) =>
    request<{ access_token: string }>("/api/v1/login", { method: "POST", form: { username, password }, noRefresh: true }),
  autoLogin: () => request<{ access_token: string }>("/api/v1/auto_login", { noRefresh: true }),
  refresh: () => request("/api/v1/refresh", { method: "POST", noRefresh: true }),
  logout: () => request("/api/v1/logout", { method: "POST", noRefresh: true }),
  // teams, members and shares (the teams plugin)
  listTeams: () => request<Team[]>("/api/v1/authz/teams"),
  createTeam: (team_name: string, adom_name: string) =>
    request<Team>("/api/v1/authz/teams", { method: "POST", json: { team_name, adom_name } }),
  deleteTeam: (id: string) => request(`/api/v1/authz/teams/${id}`, { method: "DELETE" }),
  listMembers: (teamId: string) => request<TeamMember[]>(`/api/v1/authz/teams/${teamId}/members`),
  addMember: (teamId: string, user_id: string) =>
    request<TeamMember>(`/api/v1/authz/teams/${teamId}/members`, { method: "POST", json: { user_id } }),
  removeMember: (teamId: string, userId: string) =>
    request(`/api/v1/authz/teams/${teamId}/members/${userId}`, { method: "DELETE" }),
  listUsers: () => request<{ users: User[] }>("/api/v1/users/", { query: { limit: "1000" } }),
  listShares: () => request<Share[]>("/api/v1/authz/shares"),
  /** The shares of one resource (whoever may read it: the owner and its members). */
  resourceShares: (resource_type: string, resource_id: string) =>
    request<Share[]>("/api/v1/authz/shares", { query: { resource_type, resource_id } }),
  shareProject: (projectId: string, teamId: string, permission_level: string) =>
    request<Share>("/api/v1/authz/shares", {
      method: "POST",
      json: { resource_type: "project", resource_id: projectId, scope: "team", target_id: teamId, permission_level },
    }),
  deleteShare: (id: string) => request(`/api/v1/authz/shares/${id}`, { method: "DELETE" }),
  ssoProviders: () => request<SsoProviders>("/api/v1/sso/providers", { noRefresh: true }),
  ssoLogout: () =>
    request<{ end_session_url: string | null }>("/api/v1/sso/logout", { method: "POST", noRefresh: true }),
  resetPassword: (userId: string, current_password: string, password: string) =>
    request(`/api/v1/users/${userId}/reset-password`, { method: "PATCH", json: { current_password, password } }),

  // API keys
  listKeys: () => request<{ api_keys: ApiKey[] }>("/api/v1/api_key/"),
  createKey: (name: string) => request<ApiKey>("/api/v1/api_key/", { method: "POST", json: { name } }),
  deleteKey: (id: string) => request(`/api/v1/api_key/${id}`, { method: "DELETE" }),

  // variables
  listVariables: () => request<Variable[]>("/api/v1/variables/"),
  createVariable: (v: { name: string; value: string; type: string; default_fields?: string[] }) =>
    request<Variable>("/api/v1/variables/", { method: "POST", json: { default_fields: [], ...v } }),
  updateVariable: (id: string, v: Partial<{ name: string; value: string; type: string }>) =>
    request<Variable>(`/api/v1/variables/${id}`, { method: "PATCH", json: { id, ...v } }),
  deleteVariable: (id: string) => request(`/api/v1/variables/${id}`, { method: "DELETE" }),

  // projects and flows
  listProjects: () => request<Project[]>("/api/v1/projects/"),
  createProject: (name: string, description = "") =>
    request<Project>("/api/v1/projects/", { method: "POST", json: { name, description, flows_list: [], components_list: [] } }),
  renameProject: (id: string, name: string) => request<Project>(`/api/v1/projects/${id}`, { method: "PATCH", json: { name } }),
  deleteProject: (id: string) => request(`/api/v1/projects/${id}`, { method: "DELETE" }),
  readProject: (id: string) => request<Project & { flows: FlowRecord[] }>(`/api/v1/projects/${id}`),
  readFlow: (id: string) => request<FlowRecord>(`/api/v1/flows/${id}`),
  createFlow: (flow: { name: string; description?: string; data: FlowData; folder_id?: string | null; endpoint_name?: string | null }) =>
    request<FlowRecord>("/api/v1/flows/", { method: "POST", json: flow }),
  /** ``token``: the ``version_token`` the change is based on (If-Match: a stale one answers 409 with both versions) */
  updateFlow: (id: string, patch: Partial<FlowRecord>, token?: string | null) =>
    request<FlowRecord>(`/api/v1/flows/${id}`, { method: "PATCH", json: patch, headers: token ? { "If-Match": token } : undefined }),
  deleteFlow: (id: string) => request(`/api/v1/flows/${id}`, { method: "DELETE" }),
  uploadFlows: (file: File, folderId?: string) => {
    const fd = new FormData();
    fd.append("file", file, file.name);
    return request<FlowRecord[]>("/api/v1/flows/upload/", { method: "POST", body: fd, query: { folder_id: folderId } });
  },
  downloadFlows: (ids: string[]) => request<Response>("/api/v1/flows/download/", { method: "POST", json: ids, raw: true }),
  starterProjects: () => request<StarterProject[]>("/api/v1/starter-projects/"),
  components: () => request<Catalog>("/api/v1/all"),
  extensionEvents: (since: number) => request<ExtensionEvents>("/api/v1/extensions/events", { query: { since: String(since) } }),

  // governance (superusers)
  catalogAll: () => request<Catalog>("/api/v1/all", { query: { include_blocked: "true" } }),
  allStarterProjects: () => request<StarterProject[]>("/api/v1/starter-projects/", { query: { include_blocked: "true" } }),
  componentPolicy: () => request<CatalogPolicy>("/api/v1/catalog-policy/components"),
  setComponentPolicy: (blocked: string[]) =>
    request<CatalogPolicy>("/api/v1/catalog-policy/components", { method: "PUT", json: { blocked } }),
  templatePolicy: () => request<CatalogPolicy>("/api/v1/catalog-policy/templates"),
  setTemplatePolicy: (blocked: string[]) =>
    request<CatalogPolicy>("/api/v1/catalog-policy/templates", { method: "PUT", json: { blocked } }),
  componentUsage: () => request<{ components: Record<string, number>; flows_scanned: number }>("/api/v1/catalog-policy/usage"),
  providerPolicy: () => request<ProviderPolicy>("/api/v1/model-provider-policy"),
  setProviderPolicy: (approved_provider_ids: string[]) =>
    request<ProviderPolicy>("/api/v1/model-provider-policy", { method: "PUT", json: { approved_provider_ids } }),
  policyChanges: () => request<PolicyChange[]>("/api/v1/policy-changes", { query: { limit: "200" } }),

  // build jobs and monitor
  startBuild: (flowId: string, body: unknown, query: Record<string, string | undefined>) =>
    request<{ job_id: string }>(`/api/v1/build/${flowId}/flow`, { method: "POST", json: body, query: { event_delivery: "polling", ...query } }),
  buildEvents: (jobId: string, signal?: AbortSignal) =>
    request<Response>(`/api/v1/build/${jobId}/events`, { query: { event_delivery: "streaming" }, raw: true, signal, headers: { Accept: "application/x-ndjson" } }),
  modelList: (provider: string, refresh = false) =>
    request<{ provider: string; models: string[] }>("/api/v1/model_providers/models", { query: { provider, refresh: refresh ? "true" : undefined } }),
  /** answer a paused run (the v2 workflows endpoint: the reference's decision body, plus `edit`) */
  resumeRun: (jobId: string, requestId: string, actionId: string, values: Record<string, unknown> = {}) =>
    request<{ job_id?: string }>(`/api/v2/workflows/${encodeURIComponent(jobId)}/resume`, {
      method: "POST",
      json: { request_id: requestId, decision: { action_id: actionId, values } },
    }),
  cancelBuild: (jobId: string) => request(`/api/v1/build/${jobId}/cancel`, { method: "POST" }),
  /** a v2 job's events in the reference framing (server-sent events), e.g. the job a resumed run goes on in */
  workflowEvents: (jobId: string, signal?: AbortSignal) =>
    request<Response>(`/api/v2/workflows/${encodeURIComponent(jobId)}/events`, {
      query: { stream_protocol: "service" },
      raw: true,
      signal,
      headers: { Accept: "text/event-stream" },
    }),
  stopWorkflow: (jobId: string) => request(`/api/v2/workflows/stop`, { method: "POST", json: { job_id: jobId } }),
  sessions: (flowId: string) => request<string[]>("/api/v1/monitor/messages/sessions", { query: { flow_id: flowId } }),
  messages: (flowId: string, sessionId: string) =>
    request<MonitorMessage[]>("/api/v1/monitor/messages", { query: { flow_id: flowId, session_id: sessionId, order_by: "timestamp" } }),
  /** Rename a session: the caller's own messages of it, or with ``flowId`` that flow's session only, every user's
   * messages of it (the flow's owner, or a team member who may edit it: 403 for a viewer or a run-only member). */
  renameSession: (oldId: string, newId: string, flowId?: string) =>
    request(`/api/v1/monitor/messages/session/${encodeURIComponent(oldId)}`, { method: "PATCH", query: { new_session_id: newId, flow_id: flowId } }),
  /** Delete a session: the caller's own messages of it, or with ``flowId`` that flow's session only, every user's
   * messages of it (the flow's owner, or a team member who may delete in it: 403 for a viewer or a run-only member). */
  deleteSession: (id: string, flowId?: string) =>
    request(`/api/v1/monitor/messages/session/${encodeURIComponent(id)}`, { method: "DELETE", query: { flow_id: flowId } }),

  // MCP: a project's server, and the user's MCP servers for the MCP Tools component
  mcpProjectTools: (projectId: string) =>
    request<McpProjectTools>(`/api/v1/mcp/project/${projectId}`, { query: { mcp_enabled: "false" } }),
  updateMcpProject: (projectId: string, settings: McpToolSetting[], auth_settings: McpAuthSettings) =>
    request<{ message: string; error_message?: string }>(`/api/v1/mcp/project/${projectId}`, {
      method: "PATCH",
      json: { settings, auth_settings },
    }),
  mcpComposerUrl: (projectId: string) => request<McpUrls>(`/api/v1/mcp/project/${projectId}/composer-url`),
  mcpInstall: (projectId: string, client: string, transport: string) =>
    request<McpInstall>(`/api/v1/mcp/project/${projectId}/install`, { method: "POST", json: { client, transport } }),
  mcpServers: () => request<McpServer[]>("/api/v2/mcp/servers"),
  addMcpServer: (name: string, body: McpServerBody) =>
    request<McpServer>(`/api/v2/mcp/servers/${encodeURIComponent(name)}`, { method: "POST", json: body }),
  deleteMcpServer: (name: string) => request(`/api/v2/mcp/servers/${encodeURIComponent(name)}`, { method: "DELETE" }),
  mcpServerTools: (name: string) => request<McpTool[]>(`/api/v2/mcp/servers/${encodeURIComponent(name)}/tools`),
};

export interface CatalogPolicy {
  blocked: string[];
  managed_externally: boolean;
}

export interface ProviderPolicy {
  approved_provider_ids: string[];
  registered_providers: { provider_id: string; display_name: string; provider: string }[];
  managed_externally: boolean;
}

export interface PolicyChange {
  id: string;
  policy: "components" | "templates" | "providers";
  actor: string | null;
  at: string;
  added: string[];
  removed: string[];
  after: string[];
}

export interface McpToolSetting {
  id: string;
  mcp_enabled: boolean;
  action_name: string | null;
  action_description: string | null;
  name?: string;
  description?: string | null;
}

/** A project's MCP auth settings; the OAuth client secret is write-only (never read back). */
export interface McpAuthSettings {
  auth_type?: string;
  oauth_server_url?: string | null;
  oauth_client_id?: string | null;
  oauth_client_secret?: string | null;
  oauth_mcp_scope?: string | null;
  [other: string]: string | null | undefined;
}

export interface McpProjectTools {
  tools: McpToolSetting[];
  auth_settings: McpAuthSettings | null;
  server_name: string;
}

export interface McpUrls {
  project_id: string;
  uses_composer: boolean;
  streamable_http_url: string;
  legacy_sse_url: string;
  error_message: string | null;
}

export interface McpInstall {
  message: string;
  client: string;
  transport: string;
  config: Json;
  written: boolean;
}

export interface McpServer {
  id: string;
  name: string;
  transport: string;
  url?: string;
  command?: string;
  args?: string[];
  headers?: Record<string, string>;
  env?: Record<string, string>;
  toolsCount: number | null;
  error: string | null;
}

export interface McpServerBody {
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
}

export interface McpTool {
  name: string;
  description: string;
  inputSchema: { properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
}

export interface ApiKey {
  id: string;
  name?: string | null;
  api_key: string;
  created_at?: string | null;
  last_used_at?: string | null;
  total_uses?: number;
  is_active?: boolean;
}

export interface Variable {
  id: string;
  name: string;
  type?: string | null;
  value?: string | null;
  default_fields?: string[] | null;
}

export interface StarterProject {
  name: string;
  description?: string | null;
  data: FlowData;
  endpoint_name?: string | null;
  [key: string]: unknown;
}

export interface MonitorMessage {
  id: string;
  text: string;
  sender: string;
  sender_name: string;
  session_id: string;
  timestamp: string;
  error?: boolean;
  [key: string]: unknown;
}

export type { Json };
