// Settings → Model providers: set up an OpenAI-compatible endpoint (base URL + key) or OpenAI (key), test
// the connection and see its models. Values are the global variables the models bundle reads; the key is a
// Credential (never shown again).
import { useCallback, useEffect, useState } from "react";
import { api, type Variable } from "../api/client";
import { notify, notifyError } from "../components/toast";
import { PROVIDER_KINDS, type ProviderKind } from "../lib/providers";

type Test = { state: "idle" | "testing" } | { state: "ok"; models: string[] } | { state: "error"; message: string };

export function ModelProvidersTab() {
  const [vars, setVars] = useState<Variable[] | null>(null);
  const reload = useCallback(() => {
    api
      .listVariables()
      .then(setVars)
      .catch((e) => notifyError(e, "Could not read the global variables"));
  }, []);
  useEffect(reload, [reload]);
  return (
    <section aria-labelledby="providers-title" data-testid="model-providers">
      <div className="section-head">
        <h1 id="providers-title">Model providers</h1>
      </div>
      <p className="muted">
        Set up where Language Model, Agent and Embedding Model nodes send their requests. The key is stored as a Credential global variable
        (encrypted, never shown again); model nodes then pick from the providers set up here.
      </p>
      {vars === null ? <p className="muted">Loading…</p> : PROVIDER_KINDS.map((k) => <ProviderCard key={k.name} kind={k} vars={vars} onChanged={reload} />)}
    </section>
  );
}

function ProviderCard({ kind, vars, onChanged }: { kind: ProviderKind; vars: Variable[]; onChanged: () => void }) {
  const urlVar = kind.urlVar ? vars.find((v) => v.name === kind.urlVar) : undefined;
  const keyVar = vars.find((v) => v.name === kind.keyVar);
  const configured = kind.urlVar ? !!urlVar : !!keyVar;
  const [url, setUrl] = useState(urlVar?.value ?? "");
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [test, setTest] = useState<Test>({ state: "idle" });
  const slug = kind.name.toLowerCase().replace(/\s+/g, "-");
  useEffect(() => setUrl(urlVar?.value ?? ""), [urlVar?.value]);

  const runTest = async () => {
    setTest({ state: "testing" });
    try {
      const { models } = await api.modelList(kind.name, true);
      setTest({ state: "ok", models });
    } catch (e) {
      setTest({ state: "error", message: (e as Error).message });
    }
  };

  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    if (kind.urlVar && !url.trim()) return setTest({ state: "error", message: "Enter the base URL." });
    if (kind.keyRequired && !key && !keyVar) return setTest({ state: "error", message: "Enter the API key." });
    setBusy(true);
    try {
      if (kind.urlVar) {
        if (urlVar) await api.updateVariable(urlVar.id, { value: url.trim() });
        else await api.createVariable({ name: kind.urlVar, value: url.trim(), type: "Generic" });
      }
      if (key) {
        if (keyVar) await api.updateVariable(keyVar.id, { value: key });
        else await api.createVariable({ name: kind.keyVar, value: key, type: "Credential" });
      }
      setKey("");
      onChanged();
      notify("success", `${kind.name} saved.`);
      await runTest();
    } catch (err) {
      notifyError(err, `Could not save ${kind.name}`);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setBusy(true);
    try {
      for (const v of [urlVar, keyVar]) if (v) await api.deleteVariable(v.id);
      setTest({ state: "idle" });
      onChanged();
      notify("success", `${kind.name} removed.`);
    } catch (err) {
      notifyError(err, `Could not remove ${kind.name}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="provider-card" onSubmit={save} aria-labelledby={`provider-${slug}`} data-testid={`provider-${slug}`}>
      <div className="provider-head">
        <h2 id={`provider-${slug}`}>{kind.name}</h2>
        <span className={`pill ${configured ? "pill-ok" : "pill-muted"}`}>{configured ? "Set up" : "Not set up"}</span>
      </div>
      <p className="muted small">{kind.hint}</p>
      {kind.urlVar && (
        <label className="field">
          <span>Base URL</span>
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://api.example.com/v1" required />
        </label>
      )}
      <label className="field">
        <span>API key{kind.keyRequired ? "" : " (optional)"}</span>
        <input
          type="password"
          autoComplete="off"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder={keyVar ? "Stored: leave empty to keep it" : "sk-…"}
        />
      </label>
      <div className="provider-actions">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Save
        </button>
        <button type="button" className="btn" disabled={busy || !configured || test.state === "testing"} onClick={() => void runTest()}>
          Test connection
        </button>
        {configured && (
          <button type="button" className="btn btn-danger-text" disabled={busy} onClick={() => void remove()}>
            Remove
          </button>
        )}
      </div>
      <div role="status" className="provider-test" data-testid={`provider-test-${slug}`}>
        {test.state === "testing" && "Testing…"}
        {test.state === "ok" && (
          <>
            <strong>Connected:</strong> {test.models.length} model{test.models.length === 1 ? "" : "s"}
            {test.models.length > 0 && (
              <ul className="provider-models">
                {test.models.map((m) => (
                  <li key={m}>{m}</li>
                ))}
              </ul>
            )}
          </>
        )}
        {test.state === "error" && <span className="form-error">{test.message}</span>}
      </div>
    </form>
  );
}
