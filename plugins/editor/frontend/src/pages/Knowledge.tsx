// Knowledge bases: create one, add your files to it (ingestion progress is polled from the job and the base's
// status), and try a sample search.
import { useCallback, useEffect, useMemo, useState } from "react";
import { knowledgeApi, type IngestionJob, type KnowledgeBase, type SearchHit } from "../api/files";
import { ListState, RowButton, SectionHead, TableHead } from "../components/ListPage";
import { ConfirmDialog, DialogFooter, Modal } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { Link, TopBar } from "../components/TopBar";
import { latestOnly } from "../lib/latest";
import { useFiles } from "./Files";

const LOCAL = { provider: "Local", model: "sentence-transformers/all-MiniLM-L6-v2" };
const PROVIDERS = ["Local", "OpenAI Compatible", "OpenAI", "Ollama"];
const POLL_MS = 1000;

function useBases(): [KnowledgeBase[] | null, () => Promise<void>] {
  const [bases, setBases] = useState<KnowledgeBase[] | null>(null);
  const startLoad = useMemo(latestOnly, []);
  const load = useCallback(() => {
    const isNewest = startLoad();
    return knowledgeApi.list().then(
      (got) => {
        if (isNewest()) setBases(got);
      },
      (e) => {
        if (!isNewest()) return;
        notifyError(e, "Could not load your knowledge bases");
        setBases([]);
      },
    );
  }, [startLoad]);
  useEffect(() => void load(), [load]);
  return [bases, load];
}

export function KnowledgePage() {
  const [bases, load] = useBases();
  const [selected, setSelected] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<KnowledgeBase | null>(null);
  const current = bases?.find((b) => b.name === selected) ?? null;
  return (
    <div className="app-shell">
      <TopBar />
      <main className="page-main">
        <section aria-labelledby="kb-title">
          <SectionHead id="kb-title" title="Knowledge bases">
            <button className="btn btn-primary" onClick={() => setCreating(true)}>
              New knowledge base
            </button>
          </SectionHead>
          <p className="muted">
            Chunks of your <Link to="/files">files</Link>, embedded for the Knowledge Retrieval component.
          </p>
          <ListState items={bases} empty="No knowledge bases yet.">
            {(bases) => (
              <table className="table" data-testid="kb-table">
                <TableHead columns={["Name", "Embedding model", "Chunks", "Status"]} />
                <tbody>
                  {bases.map((b) => (
                    <tr key={b.id} data-testid={`kb-row-${b.name}`} className={b.name === selected ? "selected-row" : ""}>
                      <td>
                        <button className="link-btn" onClick={() => setSelected(b.name)}>
                          {b.name}
                        </button>
                      </td>
                      <td>
                        {b.embedding_provider} · <code>{b.embedding_model}</code>
                      </td>
                      <td>{b.chunks}</td>
                      <td>
                        <span className={`status status-${b.status}`} title={b.failure_reason ?? ""}>
                          {b.status}
                        </span>
                      </td>
                      <td className="row-actions">
                        <RowButton label="Open" name={b.name} onClick={() => setSelected(b.name)} />
                        <RowButton label="Delete" name={b.name} danger onClick={() => setDeleting(b)} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </ListState>
        </section>
        {current && <BaseDetail key={current.id} base={current} onChanged={load} />}
      </main>
      {creating && (
        <CreateDialog
          onClose={() => setCreating(false)}
          onCreated={async (b) => {
            setCreating(false);
            await load();
            setSelected(b.name);
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete knowledge base"
          text={`Delete “${deleting.name}” and its ${deleting.chunks} chunks? Your files stay.`}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await knowledgeApi.remove(deleting.name);
              if (selected === deleting.name) setSelected(null);
              setDeleting(null);
              notify("success", "Knowledge base deleted.");
              await load();
            } catch (e) {
              notifyError(e, "Could not delete the knowledge base");
            }
          }}
        />
      )}
    </div>
  );
}

function CreateDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (b: KnowledgeBase) => void }) {
  const [provider, setProvider] = useState(LOCAL.provider);
  const [busy, setBusy] = useState(false);
  return (
    <Modal title="New knowledge base" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          setBusy(true);
          try {
            const created = await knowledgeApi.create({
              name: String(fd.get("name") ?? "").trim(),
              embedding_provider: provider,
              embedding_model: String(fd.get("model") ?? "").trim() || undefined,
              chunk_size: Number(fd.get("chunk_size") || 1000),
              chunk_overlap: Number(fd.get("chunk_overlap") || 200),
            });
            notify("success", `Knowledge base ${created.name} created.`);
            onCreated(created);
          } catch (err) {
            notifyError(err, "Could not create the knowledge base");
          } finally {
            setBusy(false);
          }
        }}
      >
        <label className="field">
          <span>Name</span>
          <input name="name" required maxLength={100} placeholder="e.g. product-docs" autoFocus />
        </label>
        <label className="field">
          <span>Embedding provider</span>
          <select name="provider" value={provider} onChange={(e) => setProvider(e.target.value)}>
            {PROVIDERS.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Embedding model</span>
          {provider === LOCAL.provider ? (
            <input name="model" value={LOCAL.model} readOnly />
          ) : (
            <input name="model" required placeholder="e.g. text-embedding-3-small" />
          )}
        </label>
        <div className="field-row">
          <label className="field">
            <span>Chunk size</span>
            <input name="chunk_size" type="number" min={10} defaultValue={1000} />
          </label>
          <label className="field">
            <span>Chunk overlap</span>
            <input name="chunk_overlap" type="number" min={0} defaultValue={200} />
          </label>
        </div>
        <DialogFooter onClose={onClose} busy={busy} submit="Create" />
      </form>
    </Modal>
  );
}

function BaseDetail({ base, onChanged }: { base: KnowledgeBase; onChanged: () => Promise<void> }) {
  const [files] = useFiles();
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [job, setJob] = useState<IngestionJob | null>(null);
  const [jobId, setJobId] = useState<string | null>(base.status === "ingesting" ? base.last_job_id : null);
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<SearchHit[] | null>(null);

  // poll the job's progress and the base's status until the ingestion ends
  useEffect(() => {
    if (!jobId) return;
    let live = true;
    const tick = async () => {
      try {
        const [j, kb] = await Promise.all([knowledgeApi.job(base.name, jobId), knowledgeApi.get(base.name)]);
        if (!live) return;
        setJob(j);
        if (kb.status !== "ingesting") {
          setJobId(null);
          await onChanged();
          if (kb.status === "ready") notify("success", `Ingestion into ${base.name} finished: ${kb.chunks} chunks.`);
          else notify("error", `Ingestion into ${base.name} failed: ${kb.failure_reason ?? "unknown reason"}`);
          return;
        }
      } catch (e) {
        if (!live) return;
        notifyError(e, "Could not read the ingestion's progress");
      }
      if (live) timer = window.setTimeout(tick, POLL_MS);
    };
    let timer = window.setTimeout(tick, 0);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [jobId, base.name, onChanged]);

  const progress = job?.progress;
  const fraction = progress && progress.total ? progress.done / progress.total : 0;
  return (
    <section className="kb-detail" aria-labelledby="kb-detail-title" data-testid="kb-detail">
      <h2 id="kb-detail-title">{base.name}</h2>
      <p className="muted">
        {base.chunks} chunks · {base.words} words · chunk size {base.chunk_size}, overlap {base.chunk_overlap} · status{" "}
        <span className={`status status-${base.status}`} data-testid="kb-status">
          {base.status}
        </span>
        {base.failure_reason && <span className="error-text"> ({base.failure_reason})</span>}
      </p>

      <h3>Add files</h3>
      {files === null ? (
        <p className="muted">Loading…</p>
      ) : files.length === 0 ? (
        <p className="empty">
          No files yet: <Link to="/files">upload some</Link>.
        </p>
      ) : (
        <ul className="check-list" aria-label="Your files">
          {files.map((f) => (
            <li key={f.id}>
              <label>
                <input
                  type="checkbox"
                  aria-label={`Add ${f.name}`}
                  checked={chosen.has(f.path)}
                  onChange={(e) => {
                    const next = new Set(chosen);
                    if (e.target.checked) next.add(f.path);
                    else next.delete(f.path);
                    setChosen(next);
                  }}
                />{" "}
                {f.name} <span className="muted">{f.path.split("/").pop()}</span>
              </label>
            </li>
          ))}
        </ul>
      )}
      <button
        className="btn btn-primary"
        disabled={!chosen.size || jobId !== null}
        onClick={async () => {
          try {
            const queued = await knowledgeApi.ingest(base.name, [...chosen]);
            setChosen(new Set());
            setJob(null);
            setJobId(queued.job_id);
            await onChanged();
          } catch (e) {
            notifyError(e, "Could not start the ingestion");
          }
        }}
      >
        Ingest
      </button>
      {jobId && (
        <div className="ingest-progress" data-testid="ingest-progress">
          <progress max={1} value={fraction} aria-label="Ingestion progress" />
          <span className="muted">
            {progress ? `${progress.stage} ${progress.done}/${progress.total}` : "queued"}
          </span>
        </div>
      )}

      <h3>Sample search</h3>
      <form
        className="search-row"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!query.trim()) return;
          try {
            setHits((await knowledgeApi.search(base.name, query.trim())).results);
          } catch (err) {
            notifyError(err, "The search failed");
          }
        }}
      >
        <input aria-label="Search query" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Ask something your files answer" />
        <button type="submit" className="btn" disabled={base.chunks === 0}>
          Search
        </button>
      </form>
      {hits !== null &&
        (hits.length === 0 ? (
          <p className="empty">No results.</p>
        ) : (
          <ol className="search-results" data-testid="search-results">
            {hits.map((h) => (
              <li key={h.id}>
                <div className="muted">
                  score {h.score.toFixed(3)} · {String(h.metadata.source ?? "").split("/").pop()}
                </div>
                <div className="hit-text">{h.content}</div>
              </li>
            ))}
          </ol>
        ))}
    </section>
  );
}
