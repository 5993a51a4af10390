// The page-level APIs (issue 28): the template gallery's examples, the admin users page, the message logs
// and the Home page's bulk actions. Kept apart from client.ts so each page's calls read together.
import type { FlowRecord } from "../lib/types";
import { request, type MonitorMessage, type User } from "./client";

/** An example flow as ``GET /api/v1/flows/basic_examples/`` returns it (the reference's templates). */
export interface ExampleFlow extends FlowRecord {
  tags?: string[] | null;
  icon?: string | null;
}

export interface AdminUser extends User {
  create_at?: string;
  updated_at?: string;
  last_login_at?: string | null;
}

export interface UserPage {
  total_count: number;
  users: AdminUser[];
}

export const pagesApi = {
  examples: () => request<ExampleFlow[]>("/api/v1/flows/basic_examples/"),

  // users (superusers): the reference's Admin page over /api/v1/users
  users: (skip: number, limit: number, search: string) =>
    request<UserPage>("/api/v1/users/", { query: { skip: String(skip), limit: String(limit), ...(search ? { search } : {}) } }),
  createUser: (username: string, password: string) => request<AdminUser>("/api/v1/users/", { method: "POST", json: { username, password } }),
  updateUser: (id: string, patch: Partial<{ username: string; password: string; is_active: boolean; is_superuser: boolean }>) =>
    request<AdminUser>(`/api/v1/users/${id}`, { method: "PATCH", json: patch }),
  deleteUser: (id: string) => request(`/api/v1/users/${id}`, { method: "DELETE" }),

  // message logs of a flow (the monitor API)
  flowMessages: (flowId: string) =>
    request<MonitorMessage[]>("/api/v1/monitor/messages", { query: { flow_id: flowId, order_by: "timestamp", order: "DESC" } }),
  updateMessage: (id: string, patch: { text?: string; properties?: Record<string, unknown> }) =>
    request<MonitorMessage>(`/api/v1/monitor/messages/${id}`, { method: "PUT", json: patch }),
  deleteMessages: (ids: string[]) => request("/api/v1/monitor/messages", { method: "DELETE", json: ids }),

  // Home: many flows at once
  deleteFlows: (ids: string[]) => request<{ deleted: number }>("/api/v1/flows/", { method: "DELETE", json: ids }),
  moveFlow: (id: string, folderId: string) => request<FlowRecord>(`/api/v1/flows/${id}`, { method: "PATCH", json: { folder_id: folderId } }),
};
