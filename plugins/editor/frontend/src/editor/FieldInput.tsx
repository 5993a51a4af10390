import { memo, useEffect, useMemo, useState } from "react";
import { operationOptionsFor, selectedOperation } from "../lib/dynamic";
import type { FrontendNode, TemplateField } from "../lib/types";
import { Icon } from "../components/Icon";
import { FilePicker, KNOWLEDGE_NODES, KnowledgePicker } from "./FilePickers";
import { McpServerField } from "./McpField";
import { useEditor } from "./store";
import { api } from "../api/client";
import { notifyError } from "../components/toast";
import { Link } from "../components/TopBar";
import { configuredProviders, pickerProviders, probeProvider } from "../lib/providers";

const DEFAULT_PROVIDER = "OpenAI Compatible";

interface ModelEntry {
  name: string;
  provider: string;
}

function modelEntry(v: unknown): ModelEntry | null {
  const e = Array.isArray(v) ? v[0] : v;
  if (e && typeof e === "object" && "name" in e) return { name: String((e as ModelEntry).name ?? ""), provider: String((e as ModelEntry).provider ?? DEFAULT_PROVIDER) };
  return typeof e === "string" && e ? { name: e, provider: DEFAULT_PROVIDER } : null;
}

function modelValue(name: string, provider: string) {
  return [{ name, provider, icon: provider === "Ollama" ? "Ollama" : "OpenAI", category: provider, metadata: {} }];
}

/**
 * The reference's model field: a provider set up on the Model providers page, and a model its `GET /models`
 * lists (live, refreshable). The provider choice is saved in the flow at once (`[{name, provider, ...}]`);
 * with no provider set up the field is a call to action instead of a failing request.
 */
function ModelPicker({ id, label, value, onSet }: { id: string; label: string; value: unknown; onSet: (v: unknown) => void }) {
  const ed = useEditor();
  const [fromServer, setFromServer] = useState<string[]>([]);
  const fromVariables = useMemo(() => configuredProviders(ed.variables.map((v) => v.name)), [ed.variables]);
  const configured = useMemo(() => [...new Set([...fromVariables, ...fromServer])], [fromVariables, fromServer]);
  const current = modelEntry(value);
  const provider = current?.provider || configured[0] || DEFAULT_PROVIDER;
  const usable = configured.includes(provider);
  const [models, setModels] = useState<string[] | null>(null);
  const [loading, setLoading] = useState(false);
  const load = async (refresh: boolean) => {
    setLoading(true);
    try {
      setModels((await api.modelList(provider, refresh)).models);
    } catch (e) {
      setModels([]);
      notifyError(e, `Could not list the models of ${provider}`);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    if (usable) void load(false);
    else setModels(null);
  }, [provider, usable]); // eslint-disable-line react-hooks/exhaustive-deps
  // no variable names the provider: the server may still have it from its environment
  useEffect(() => {
    if (!ed.variablesLoaded || fromVariables.includes(provider)) return;
    let live = true;
    void probeProvider(provider, api.modelList).then((ok) => live && ok && setFromServer((s) => (s.includes(provider) ? s : [...s, provider])));
    return () => {
      live = false;
    };
  }, [ed.variablesLoaded, fromVariables, provider]);
  if (!ed.variablesLoaded) return <div className="nf-model nodrag muted small">Loading…</div>;
  if (!configured.length || !usable)
    return (
      <div className="model-cta nodrag" data-testid="model-cta">
        <span>
          {current?.name ? `${current.name} · ` : ""}
          {provider} is not set up{configured.length ? "" : ": no model provider yet"}.
        </span>
        <Link to="/settings/model-providers" className="btn btn-small btn-primary">
          Set up a model provider
        </Link>
        {configured.length > 0 && (
          <select aria-label={`${label} provider`} value={provider} onChange={(e) => onSet(modelValue("", e.target.value))}>
            {pickerProviders(configured, provider).map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        )}
      </div>
    );
  const names = models ?? [];
  return (
    <div className="nf-model nodrag" data-testid="model-picker">
      <select aria-label={`${label} provider`} value={provider} onChange={(e) => onSet(modelValue("", e.target.value))}>
        {pickerProviders(configured, provider).map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
      <select id={id} aria-label={label} value={current?.name ?? ""} onChange={(e) => onSet(e.target.value ? modelValue(e.target.value, provider) : modelValue("", provider))}>
        <option value="">{loading ? "Loading models…" : "Choose a model…"}</option>
        {current?.name && !names.includes(current.name) && <option value={current.name}>{current.name}</option>}
        {names.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
      <button type="button" className="icon-btn" aria-label="Refresh the model list" title="Refresh" onClick={() => void load(true)}>
        ↻
      </button>
    </div>
  );
}

interface Props {
  nodeId: string;
  componentKey: string;
  name: string;
  field: TemplateField;
  node: FrontendNode;
}

/** A text input that keeps typing local and commits on blur / after a pause (one undo step per edit). */
function useDraft<T>(value: T, commit: (v: T) => void, delay = 400): [T, (v: T) => void, () => void] {
  const [draft, setDraft] = useState(value);
  const [dirty, setDirty] = useState(false);
  useEffect(() => {
    if (!dirty) setDraft(value);
  }, [value, dirty]);
  useEffect(() => {
    if (!dirty) return;
    const t = setTimeout(() => {
      commit(draft);
      setDirty(false);
    }, delay);
    return () => clearTimeout(t);
  }, [draft, dirty, commit, delay]);
  const flush = () => {
    if (dirty) {
      commit(draft);
      setDirty(false);
    }
  };
  return [draft, (v: T) => (setDraft(v), setDirty(true)), flush];
}

function asText(v: unknown): string {
  if (v == null) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join("\n");
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

function kindOf(f: TemplateField): string {
  const it = f._input_type ?? "";
  if (f.type === "mcp" || it === "McpInput") return "mcp";
  if (f.type === "model" || it === "ModelInput") return "model";
  if (f.type === "code" || it === "CodeInput") return "code";
  if (f.type === "prompt" || it === "PromptInput") return "prompt";
  if (f.type === "tab" || it === "TabInput") return "tab";
  if (f.type === "slider" || it === "SliderInput") return "slider";
  if (f.type === "sortableList" || it === "SortableListInput") return "sortable";
  if (f.type === "bool" || it === "BoolInput") return "bool";
  if (f.type === "int" || f.type === "float" || it === "IntInput" || it === "FloatInput") return "number";
  if (f.type === "dict" || f.type === "NestedDict" || it === "DictInput" || it === "NestedDictInput") return "dict";
  if (f.type === "table" || it === "TableInput") return "dict";
  if (f.type === "file" || it === "FileInput") return "file";
  if (Array.isArray(f.options) && (it === "DropdownInput" || f.options.length)) return "dropdown";
  if (f.password || it === "SecretStrInput") return "secret";
  if (f.list) return "list";
  if (f.multiline || it === "MultilineInput") return "multiline";
  if (f.type === "other") return "handle";
  return "text";
}

export const FieldInput = memo(function FieldInput({ nodeId, componentKey, name, field, node }: Props) {
  const ed = useEditor();
  const label = field.display_name || name;
  const id = `f-${nodeId}-${name}`;
  const set = (value: unknown, extra: Partial<TemplateField> = {}) => ed.setField(nodeId, name, { value, ...extra });
  const kind = kindOf(field);

  if (name === "knowledge_base" && KNOWLEDGE_NODES.has(componentKey))
    return <KnowledgePicker id={id} label={label} value={field.value} onSet={set} />;
  switch (kind) {
    case "handle":
      return null;
    case "file":
      return <FilePicker id={id} label={label} field={field} onSet={set} />;
    case "mcp":
      return <McpServerField nodeId={nodeId} node={node} field={field} />;
    case "model":
      return <ModelPicker id={id} label={label} value={field.value} onSet={set} />;
    case "bool":
      return (
        <label className="nf-bool nodrag" htmlFor={id}>
          <input id={id} type="checkbox" checked={!!field.value} onChange={(e) => set(e.target.checked)} />
          <span className="switch" aria-hidden />
        </label>
      );
    case "number":
      return <NumberInput id={id} label={label} field={field} onCommit={set} />;
    case "slider": {
      const r = field.range_spec ?? {};
      const min = r.min ?? 0;
      const max = r.max ?? 1;
      const step = r.step ?? 0.01;
      const v = typeof field.value === "number" ? field.value : Number(field.value ?? min);
      return (
        <div className="nf-slider nodrag">
          <input id={id} aria-label={label} type="range" min={min} max={max} step={step} value={v} onChange={(e) => set(Number(e.target.value))} />
          <output>{v}</output>
        </div>
      );
    }
    case "tab":
      return (
        <div className="segmented nodrag" role="radiogroup" aria-label={label}>
          {(field.options ?? []).map((o) => {
            const s = String(o);
            return (
              <button key={s} type="button" role="radio" aria-checked={field.value === s} className={field.value === s ? "active" : ""} onClick={() => set(s)}>
                {s}
              </button>
            );
          })}
        </div>
      );
    case "dropdown":
      return (
        <select id={id} aria-label={label} className="nodrag" value={String(field.value ?? "")} onChange={(e) => set(e.target.value)}>
          {!(field.options ?? []).map(String).includes(String(field.value ?? "")) && <option value={String(field.value ?? "")}>{String(field.value ?? "") || "Choose…"}</option>}
          {(field.options ?? []).map((o) => (
            <option key={String(o)} value={String(o)}>
              {String(o)}
            </option>
          ))}
        </select>
      );
    case "sortable": {
      const options = operationOptionsFor(componentKey, node, field.options ?? []);
      const current = selectedOperation(field.value);
      return (
        <select
          id={id}
          aria-label={label}
          className="nodrag"
          value={current}
          onChange={(e) => {
            const opt = options.find((o) => selectedOperation(o) === e.target.value);
            set(opt ? [opt] : []);
          }}
        >
          <option value="">Choose an operation…</option>
          {options.map((o) => {
            const n = selectedOperation(o);
            return (
              <option key={n} value={n}>
                {n}
              </option>
            );
          })}
        </select>
      );
    }
    case "secret":
      return <SecretInput id={id} label={label} field={field} onSet={set} />;
    case "code":
    case "prompt":
    case "multiline":
    case "dict":
      return <LongText id={id} label={label} field={field} kind={kind} onCommit={set} onExpand={() => ed.openBigEditor(nodeId, name)} />;
    case "list":
      return <ListInput id={id} label={label} field={field} onCommit={set} />;
    default:
      return <TextInput id={id} label={label} field={field} onCommit={set} />;
  }
});

function TextInput({ id, label, field, onCommit }: { id: string; label: string; field: TemplateField; onCommit: (v: unknown) => void }) {
  const [draft, setDraft, flush] = useDraft(asText(field.value), onCommit);
  return (
    <input
      id={id}
      aria-label={label}
      className="nodrag"
      value={draft}
      placeholder={field.placeholder || ""}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={flush}
      onKeyDown={(e) => e.key === "Enter" && flush()}
    />
  );
}

function NumberInput({ id, label, field, onCommit }: { id: string; label: string; field: TemplateField; onCommit: (v: unknown) => void }) {
  const isInt = field.type === "int" || field._input_type === "IntInput";
  const [draft, setDraft, flush] = useDraft(field.value == null ? "" : String(field.value), (s: string) => {
    if (s.trim() === "") return onCommit(null);
    const n = isInt ? parseInt(s, 10) : parseFloat(s);
    if (!Number.isNaN(n)) onCommit(n);
  });
  return (
    <input
      id={id}
      aria-label={label}
      className="nodrag"
      type="number"
      step={isInt ? 1 : "any"}
      value={draft}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={flush}
    />
  );
}

function ListInput({ id, label, field, onCommit }: { id: string; label: string; field: TemplateField; onCommit: (v: unknown) => void }) {
  const initial = Array.isArray(field.value) ? (field.value as unknown[]).map(asText).join("\n") : asText(field.value);
  const [draft, setDraft, flush] = useDraft(initial, (s: string) => onCommit(s.split("\n").map((x) => x.trim()).filter(Boolean)));
  return (
    <textarea
      id={id}
      aria-label={`${label} (one per line)`}
      className="nodrag nowheel"
      rows={2}
      placeholder="One per line"
      value={draft}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={flush}
    />
  );
}

function LongText(props: { id: string; label: string; field: TemplateField; kind: string; onCommit: (v: unknown) => void; onExpand: () => void }) {
  const { id, label, field, kind, onCommit, onExpand } = props;
  const isJson = kind === "dict";
  const [draft, setDraft, flush] = useDraft(asText(field.value), (s: string) => {
    if (!isJson) return onCommit(s);
    try {
      onCommit(s.trim() ? JSON.parse(s) : {});
    } catch {
      /* invalid JSON stays in the draft until fixed; the big editor reports it */
    }
  });
  return (
    <div className="nf-long">
      <textarea
        id={id}
        aria-label={label}
        className={`nodrag nowheel${kind === "code" || isJson ? " mono" : ""}`}
        rows={kind === "code" ? 3 : 2}
        value={draft}
        placeholder={field.placeholder || ""}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={flush}
      />
      <button type="button" className="icon-btn expand-btn" aria-label={`Open ${label} in a larger editor`} title="Open in a larger editor" onClick={onExpand}>
        <Icon name="expand" size={12} />
      </button>
    </div>
  );
}

function SecretInput({ id, label, field, onSet }: { id: string; label: string; field: TemplateField; onSet: (v: unknown, extra?: Partial<TemplateField>) => void }) {
  const ed = useEditor();
  const bound = !!field.load_from_db && typeof field.value === "string" && !!field.value;
  const [draft, setDraft, flush] = useDraft(bound ? "" : asText(field.value), (s: string) => onSet(s, { load_from_db: false }));
  return (
    <div className="nf-secret nodrag">
      {bound ? (
        <span className="var-chip" title="Bound to a global variable">
          <Icon name="globe" size={12} /> {String(field.value)}
          <button type="button" className="icon-btn" aria-label={`Unbind ${label} from the variable`} onClick={() => onSet("", { load_from_db: false })}>
            ×
          </button>
        </span>
      ) : (
        <input id={id} aria-label={label} type="password" autoComplete="off" value={draft} onChange={(e) => setDraft(e.target.value)} onBlur={flush} />
      )}
      <select
        aria-label={`Bind ${label} to a global variable`}
        title="Use a global variable"
        value=""
        onFocus={() => ed.refreshVariables()}
        onChange={(e) => e.target.value && onSet(e.target.value, { load_from_db: true })}
      >
        <option value="">Variable…</option>
        {ed.variables.map((v) => (
          <option key={v.id} value={v.name}>
            {v.name}
          </option>
        ))}
      </select>
    </div>
  );
}
