// The File node's file picker (your uploaded files, plus an upload button) and the Knowledge nodes'
// knowledge-base picker (your knowledge bases; a new name is allowed where ingestion creates one).
import { useEffect, useMemo, useState } from "react";
import { filesApi, knowledgeApi, type KnowledgeBase, type UserFile } from "../api/files";
import { latestOnly } from "../lib/latest";
import type { TemplateField } from "../lib/types";
import { UploadButton } from "../pages/Files";

function asList(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String).filter(Boolean);
  return typeof v === "string" && v ? [v] : [];
}

/** Sets `value` to the chosen files' names and `file_path` to their stored paths (what a run reads). */
export function FilePicker({
  id,
  label,
  field,
  onSet,
}: {
  id: string;
  label: string;
  field: TemplateField;
  onSet: (value: unknown, extra: Partial<TemplateField>) => void;
}) {
  const [files, setFiles] = useState<UserFile[] | null>(null);
  const startLoad = useMemo(latestOnly, []);
  const load = () => {
    const isNewest = startLoad();
    return filesApi.list().then(
      (got) => isNewest() && setFiles(got),
      () => isNewest() && setFiles([]),
    );
  };
  useEffect(() => void load(), []);
  const multiple = Boolean(field.list);
  const paths = asList(field.file_path);
  const choose = (chosen: string[]) => {
    const rows = chosen.map((p) => (files ?? []).find((f) => f.path === p));
    const names = rows.map((f, i) => (f ? `${f.name}${extOf(f.path)}` : chosen[i].split("/").pop() ?? ""));
    onSet(multiple ? names : names[0] ?? "", { file_path: multiple ? chosen : chosen[0] ?? "" });
  };
  const known = new Set((files ?? []).map((f) => f.path));
  return (
    <div className="nf-file nodrag" data-testid="file-picker">
      <select
        id={id}
        aria-label={label}
        multiple={multiple}
        value={multiple ? paths : paths[0] ?? ""}
        onChange={(e) => choose(Array.from(e.target.selectedOptions).map((o) => o.value).filter(Boolean))}
      >
        {!multiple && <option value="">{files === null ? "Loading files…" : "Choose a file…"}</option>}
        {paths
          .filter((p) => !known.has(p))
          .map((p) => (
            <option key={p} value={p}>
              {p.split("/").pop()} (missing)
            </option>
          ))}
        {(files ?? []).map((f) => (
          <option key={f.id} value={f.path}>
            {f.name}
            {extOf(f.path)}
          </option>
        ))}
      </select>
      <UploadButton
        label="Upload"
        onUploaded={(f) => {
          void load();
          choose(multiple ? [...paths, f.path] : [f.path]);
        }}
      />
    </div>
  );
}

function extOf(path: string): string {
  const base = path.split("/").pop() ?? "";
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot) : "";
}

export const KNOWLEDGE_NODES = new Set(["Knowledge", "KnowledgeBase", "KnowledgeIngestion", "KnowledgeRetrieval"]);

/** A text box with your knowledge bases as suggestions (a new name is fine for ingestion: it creates one). */
export function KnowledgePicker({ id, label, value, onSet }: { id: string; label: string; value: unknown; onSet: (v: unknown) => void }) {
  const [bases, setBases] = useState<KnowledgeBase[] | null>(null);
  const [draft, setDraft] = useState(String(value ?? ""));
  useEffect(() => {
    knowledgeApi.list().then(setBases, () => setBases([]));
  }, []);
  useEffect(() => setDraft(String(value ?? "")), [value]);
  const listId = `${id}-bases`;
  return (
    <div className="nf-kb nodrag" data-testid="knowledge-picker">
      <input
        id={id}
        aria-label={label}
        list={listId}
        value={draft}
        placeholder={bases === null ? "Loading…" : "Choose a knowledge base…"}
        onChange={(e) => {
          setDraft(e.target.value);
          if ((bases ?? []).some((b) => b.name === e.target.value)) onSet(e.target.value); // picked from the list
        }}
        onBlur={() => draft !== String(value ?? "") && onSet(draft)}
        onKeyDown={(e) => e.key === "Enter" && onSet(draft)}
      />
      <datalist id={listId}>
        {(bases ?? []).map((b) => (
          <option key={b.id} value={b.name}>
            {b.chunks} chunks · {b.status}
          </option>
        ))}
      </datalist>
    </div>
  );
}
