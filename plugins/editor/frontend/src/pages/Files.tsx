// My files: upload (with a progress bar), list, rename, delete, download. The File node's picker and the
// Knowledge page read the same list.
import { useCallback, useEffect, useRef, useState } from "react";
import { filesApi, formatSize, uploadFile, type UserFile } from "../api/files";
import { ListState, RowButton, SectionHead, TableHead } from "../components/ListPage";
import { ConfirmDialog, PromptDialog } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { Link, TopBar } from "../components/TopBar";

interface Upload {
  name: string;
  fraction: number;
}

/** A file chooser button that uploads each chosen file and reports progress; shared with the File node. */
export function UploadButton({ onUploaded, label = "Upload files" }: { onUploaded: (f: UserFile) => void; label?: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const send = async (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      setUploads((u) => [...u, { name: file.name, fraction: 0 }]);
      try {
        const stored = await uploadFile(file, (fraction) =>
          setUploads((u) => u.map((x) => (x.name === file.name ? { ...x, fraction } : x))),
        );
        notify("success", `Uploaded ${file.name}.`);
        onUploaded(stored);
      } catch (e) {
        notifyError(e, `Could not upload ${file.name}`);
      } finally {
        setUploads((u) => u.filter((x) => x.name !== file.name));
      }
    }
    if (input.current) input.current.value = "";
  };
  return (
    <div className="upload-box">
      <input ref={input} type="file" multiple hidden data-testid="file-input" onChange={(e) => void send(e.target.files)} />
      <button type="button" className="btn btn-primary" onClick={() => input.current?.click()}>
        {label}
      </button>
      {uploads.map((u) => (
        <div key={u.name} className="upload-progress">
          <span>{u.name}</span>
          <progress max={1} value={u.fraction} aria-label={`Uploading ${u.name}`} />
          <span className="muted">{Math.round(u.fraction * 100)}%</span>
        </div>
      ))}
    </div>
  );
}

export function useFiles(): [UserFile[] | null, () => void] {
  const [files, setFiles] = useState<UserFile[] | null>(null);
  const load = useCallback(() => {
    filesApi.list().then(setFiles, (e) => {
      notifyError(e, "Could not load your files");
      setFiles([]);
    });
  }, []);
  useEffect(load, [load]);
  return [files, load];
}

function extension(path: string): string {
  const base = path.split("/").pop() ?? "";
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot) : "";
}

export function FilesPage() {
  const [files, load] = useFiles();
  const [renaming, setRenaming] = useState<UserFile | null>(null);
  const [deleting, setDeleting] = useState<UserFile | null>(null);
  return (
    <div className="app-shell">
      <TopBar />
      <main className="page-main">
        <section aria-labelledby="files-title">
          <SectionHead id="files-title" title="My files">
            <UploadButton onUploaded={load} />
          </SectionHead>
          <p className="muted">
            Files you upload can be read by the File component and added to <Link to="/knowledge">knowledge bases</Link>.
          </p>
          <ListState items={files} empty="No files yet.">
            {(files) => (
              <table className="table" data-testid="files-table">
                <TableHead columns={["Name", "Type", "Size", "Uploaded"]} />
                <tbody>
                  {files.map((f) => (
                    <tr key={f.id} data-testid={`file-row-${f.name}`}>
                      <td>{f.name}</td>
                      <td>
                        <code>{extension(f.path) || "—"}</code>
                      </td>
                      <td>{formatSize(f.size)}</td>
                      <td>{f.created_at ? new Date(f.created_at).toLocaleString() : "—"}</td>
                      <td className="row-actions">
                        <a className="btn btn-small" href={filesApi.downloadUrl(f.id)} download={`${f.name}${extension(f.path)}`}>
                          Download
                        </a>
                        <RowButton label="Rename" name={f.name} onClick={() => setRenaming(f)} />
                        <RowButton label="Delete" name={f.name} danger onClick={() => setDeleting(f)} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </ListState>
        </section>
      </main>
      {renaming && (
        <PromptDialog
          title="Rename file"
          label="Name"
          initial={renaming.name}
          submitLabel="Rename"
          onClose={() => setRenaming(null)}
          onSubmit={async (name) => {
            try {
              await filesApi.rename(renaming.id, name);
              setRenaming(null);
              load();
            } catch (e) {
              notifyError(e, "Could not rename the file");
            }
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete file"
          text={`Delete “${deleting.name}”? Knowledge bases keep what they already ingested from it.`}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await filesApi.remove(deleting.id);
              setDeleting(null);
              notify("success", "File deleted.");
              load();
            } catch (e) {
              notifyError(e, "Could not delete the file");
            }
          }}
        />
      )}
    </div>
  );
}
