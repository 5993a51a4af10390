// Files (/api/v2/files) and knowledge bases (/api/v1/knowledge_bases) for the Files and Knowledge pages
// and the File / Knowledge nodes' pickers.
import { ApiError, describeError } from "../lib/errors";
import { request } from "./client";

export interface UserFile {
  id: string;
  name: string;
  path: string;
  size: number;
  provider?: string;
  created_at?: string;
  updated_at?: string;
}

export interface KnowledgeBase {
  id: string;
  name: string;
  embedding_provider: string;
  embedding_model: string;
  size: number;
  words: number;
  characters: number;
  chunks: number;
  avg_chunk_size: number;
  chunk_size: number;
  chunk_overlap: number;
  status: "empty" | "ingesting" | "ready" | "failed";
  failure_reason: string | null;
  last_job_id: string | null;
  source_types: string[];
  updated_at?: string;
}

export interface IngestionJob {
  job_id: string;
  state: string;
  error: string | null;
  progress: { stage: string; done: number; total: number } | null;
}

export interface SearchHit {
  id: string;
  content: string;
  score: number;
  metadata: Record<string, unknown>;
}

/** Upload one file with progress (fetch cannot report upload progress; XMLHttpRequest can). */
export function uploadFile(file: File, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<UserFile> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/v2/files");
    xhr.withCredentials = true;
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: unknown = undefined;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        body = xhr.responseText;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as UserFile);
      } else reject(new ApiError(xhr.status, describeError(xhr.status, body), body));
    };
    xhr.onerror = () => reject(new ApiError(0, "The upload failed: the server cannot be reached."));
    xhr.onabort = () => reject(new DOMException("Upload cancelled", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort());
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

export const filesApi = {
  list: () => request<UserFile[]>("/api/v2/files"),
  rename: (id: string, name: string) => request<UserFile>(`/api/v2/files/${id}`, { method: "PUT", query: { name } }),
  remove: (id: string) => request(`/api/v2/files/${id}`, { method: "DELETE" }),
  downloadUrl: (id: string) => `/api/v2/files/${id}`,
};

const KB = "/api/v1/knowledge_bases";
const kbPath = (name: string) => `${KB}/${encodeURIComponent(name)}`;

export const knowledgeApi = {
  list: () => request<KnowledgeBase[]>(`${KB}/`),
  get: (name: string) => request<KnowledgeBase>(kbPath(name)),
  create: (body: { name: string; embedding_provider?: string; embedding_model?: string; chunk_size?: number; chunk_overlap?: number }) =>
    request<KnowledgeBase>(`${KB}/`, { method: "POST", json: body }),
  remove: (name: string) => request(kbPath(name), { method: "DELETE" }),
  ingest: (name: string, fileIds: string[]) =>
    request<{ job_id: string; status: string }>(`${kbPath(name)}/ingest`, { method: "POST", json: { file_ids: fileIds } }),
  job: (name: string, jobId: string) => request<IngestionJob>(`${kbPath(name)}/jobs/${encodeURIComponent(jobId)}`),
  search: (name: string, query: string, topK = 5) =>
    request<{ results: SearchHit[] }>(`${kbPath(name)}/search`, { method: "POST", json: { query, top_k: topK } }),
};

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
