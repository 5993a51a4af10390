// Admin governance: block components and templates (with usage counts), approve model providers, change log.
import { useCallback, useEffect, useMemo, useState } from "react";
import { api, type PolicyChange, type ProviderPolicy } from "../api/client";
import { ConfirmDialog } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { ListState, SectionHead, TabbedPage } from "../components/ListPage";
import { TopBar } from "../components/TopBar";
import { bootstrap, useSession } from "../session";

const TABS = [
  { id: "components", label: "Components" },
  { id: "templates", label: "Templates" },
  { id: "providers", label: "Model providers" },
  { id: "changes", label: "Change log" },
];

export function GovernancePage({ tab }: { tab: string }) {
  const session = useSession();
  const admin = Boolean(session.user?.is_superuser);
  return (
    <div className="app-shell">
      <TopBar />
      <TabbedPage label="Governance" base="/admin/governance" tabs={TABS} tab={tab}>
          {!admin ? (
            <p className="empty">Only superusers can change governance policies.</p>
          ) : tab === "templates" ? (
            <TemplatesTab />
          ) : tab === "providers" ? (
            <ProvidersTab />
          ) : tab === "changes" ? (
            <ChangesTab />
          ) : (
            <ComponentsTab />
          )}
      </TabbedPage>
    </div>
  );
}

interface Row {
  key: string;
  name: string;
  detail: string;
  used?: number;
}

/** A checklist of keys with a filter, a "used by N flows" count and one Save that replaces the complete set. */
function BlockList({
  title,
  intro,
  rows,
  blocked,
  managed,
  onSave,
  noun,
}: {
  title: string;
  intro: string;
  rows: Row[] | null;
  blocked: string[] | null;
  managed: boolean;
  onSave: (keys: string[]) => Promise<void>;
  noun: string;
}) {
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [filter, setFilter] = useState("");
  const [confirm, setConfirm] = useState(false);
  useEffect(() => setChosen(new Set(blocked ?? [])), [blocked]);
  const dirty = useMemo(() => {
    const before = new Set(blocked ?? []);
    return before.size !== chosen.size || [...chosen].some((k) => !before.has(k));
  }, [blocked, chosen]);
  const shown = (rows ?? []).filter((r) => `${r.name} ${r.key} ${r.detail}`.toLowerCase().includes(filter.toLowerCase()));
  const newlyBlocked = (rows ?? []).filter((r) => chosen.has(r.key) && !(blocked ?? []).includes(r.key));
  const affected = newlyBlocked.reduce((n, r) => n + (r.used ?? 0), 0);
  return (
    <section aria-labelledby="gov-title">
      <div className="section-head">
        <h1 id="gov-title">{title}</h1>
        <button className="btn btn-primary" disabled={managed || !dirty} onClick={() => setConfirm(true)}>
          Save
        </button>
      </div>
      <p className="muted">{intro}</p>
      {managed && (
        <p className="notice" role="status">
          This policy is managed externally (environment or policy file): it cannot be changed here.
        </p>
      )}
      <label className="field">
        <span>Filter</span>
        <input value={filter} onChange={(e) => setFilter(e.target.value)} placeholder={`Search ${noun}s`} />
      </label>
      {rows === null || blocked === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <table className="table" data-testid={`gov-${noun}s`}>
          <thead>
            <tr>
              <th>Blocked</th>
              <th>Name</th>
              <th>Key</th>
              <th>Usage</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.key} className={chosen.has(r.key) ? "blocked-row" : ""}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Block ${r.name}`}
                    checked={chosen.has(r.key)}
                    disabled={managed}
                    onChange={(e) => {
                      const next = new Set(chosen);
                      if (e.target.checked) next.add(r.key);
                      else next.delete(r.key);
                      setChosen(next);
                    }}
                  />
                </td>
                <td>
                  {r.name}
                  {r.detail && <span className="muted"> · {r.detail}</span>}
                </td>
                <td>
                  <code>{r.key}</code>
                </td>
                <td>{r.used === undefined ? "" : r.used === 0 ? "unused" : `used by ${r.used} flow${r.used === 1 ? "" : "s"}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {confirm && (
        <ConfirmDialog
          title={`Save the ${noun} policy`}
          confirmLabel="Save policy"
          text={
            newlyBlocked.length
              ? `Block ${newlyBlocked.length} ${noun}(s)? ${affected ? `Flows using them (${affected} uses) will stop running until they are unblocked.` : ""}`
              : `Save the ${noun} policy?`
          }
          onClose={() => setConfirm(false)}
          onConfirm={async () => {
            try {
              await onSave([...chosen].sort());
              setConfirm(false);
              notify("success", "Policy saved.");
            } catch (e) {
              notifyError(e, "Could not save the policy");
            }
          }}
        />
      )}
    </section>
  );
}

function ComponentsTab() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [blocked, setBlocked] = useState<string[] | null>(null);
  const [managed, setManaged] = useState(false);
  const load = useCallback(() => {
    Promise.all([api.catalogAll(), api.componentPolicy(), api.componentUsage()])
      .then(([catalog, policy, usage]) => {
        const out: Row[] = [];
        for (const [category, nodes] of Object.entries(catalog)) {
          if (category === "component_display_names") continue;
          for (const [key, node] of Object.entries(nodes))
            out.push({ key, name: String(node.display_name ?? key), detail: category, used: usage.components[key] ?? 0 });
        }
        out.sort((a, b) => a.name.localeCompare(b.name));
        setRows(out);
        setBlocked(policy.blocked);
        setManaged(policy.managed_externally);
      })
      .catch((e) => notifyError(e, "Could not load the component policy"));
  }, []);
  useEffect(load, [load]);
  return (
    <BlockList
      title="Components"
      intro="Blocked components disappear from the catalog, and flows that use them are kept but cannot run."
      rows={rows}
      blocked={blocked}
      managed={managed}
      noun="component"
      onSave={async (keys) => {
        const saved = await api.setComponentPolicy(keys);
        setBlocked(saved.blocked);
        void bootstrap(); // the configuration's blocked_component_types changed
        load();
      }}
    />
  );
}

function TemplatesTab() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [blocked, setBlocked] = useState<string[] | null>(null);
  const [managed, setManaged] = useState(false);
  useEffect(() => {
    Promise.all([api.allStarterProjects(), api.templatePolicy()])
      .then(([projects, policy]) => {
        setRows(
          projects.map((p) => ({ key: String(p.name_key ?? p.name), name: p.name, detail: String(p.description ?? "") })),
        );
        setBlocked(policy.blocked);
        setManaged(policy.managed_externally);
      })
      .catch((e) => notifyError(e, "Could not load the template policy"));
  }, []);
  return (
    <BlockList
      title="Templates"
      intro="Blocked templates are hidden from the starter projects and examples."
      rows={rows}
      blocked={blocked}
      managed={managed}
      noun="template"
      onSave={async (keys) => setBlocked((await api.setTemplatePolicy(keys)).blocked)}
    />
  );
}

function ProvidersTab() {
  const [policy, setPolicy] = useState<ProviderPolicy | null>(null);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  useEffect(() => {
    api
      .providerPolicy()
      .then((p) => {
        setPolicy(p);
        setChosen(new Set(p.approved_provider_ids));
      })
      .catch((e) => notifyError(e, "Could not load the model provider policy"));
  }, []);
  if (!policy) return <p className="muted">Loading…</p>;
  const extra = policy.approved_provider_ids.filter((id) => !policy.registered_providers.some((p) => p.provider_id === id));
  return (
    <section aria-labelledby="prov-title">
      <SectionHead id="prov-title" title="Model providers">
        <button
          className="btn btn-primary"
          disabled={policy.managed_externally}
          onClick={async () => {
            try {
              const saved = await api.setProviderPolicy([...chosen].sort());
              setPolicy(saved);
              setChosen(new Set(saved.approved_provider_ids));
              notify("success", "Provider policy saved.");
            } catch (e) {
              notifyError(e, "Could not save the provider policy");
            }
          }}
        >
          Save
        </button>
      </SectionHead>
      <p className="muted">
        Approve the providers models may use. With none approved, every provider is allowed
        {chosen.size === 0 ? " (the case now)." : "."}
      </p>
      {policy.managed_externally && <p className="notice">This policy is managed externally: it cannot be changed here.</p>}
      {policy.registered_providers.length === 0 && extra.length === 0 ? (
        <p className="empty">No model provider is installed.</p>
      ) : (
        <table className="table" data-testid="gov-providers">
          <thead>
            <tr>
              <th>Approved</th>
              <th>Provider</th>
              <th>Id</th>
            </tr>
          </thead>
          <tbody>
            {[...policy.registered_providers.map((p) => ({ id: p.provider_id, name: p.display_name })), ...extra.map((id) => ({ id, name: `${id} (not installed)` }))].map((p) => (
              <tr key={p.id}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Approve ${p.name}`}
                    checked={chosen.has(p.id)}
                    disabled={policy.managed_externally}
                    onChange={(e) => {
                      const next = new Set(chosen);
                      if (e.target.checked) next.add(p.id);
                      else next.delete(p.id);
                      setChosen(next);
                    }}
                  />
                </td>
                <td>{p.name}</td>
                <td>
                  <code>{p.id}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const POLICY_NAMES: Record<PolicyChange["policy"], string> = {
  components: "Components",
  templates: "Templates",
  providers: "Model providers",
};

function ChangesTab() {
  const [changes, setChanges] = useState<PolicyChange[] | null>(null);
  useEffect(() => {
    api
      .policyChanges()
      .then(setChanges)
      .catch((e) => {
        notifyError(e, "Could not load the change log");
        setChanges([]);
      });
  }, []);
  return (
    <section aria-labelledby="changes-title">
      <h1 id="changes-title">Change log</h1>
      <ListState items={changes} empty="No policy has been changed yet.">
        {(changes) => (
          <table className="table" data-testid="gov-changes">
            <thead>
              <tr>
                <th>When</th>
                <th>Who</th>
                <th>Policy</th>
                <th>Added</th>
                <th>Removed</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((c) => (
                <tr key={c.id}>
                  <td>{new Date(c.at).toLocaleString()}</td>
                  <td>{c.actor ?? "—"}</td>
                  <td>{POLICY_NAMES[c.policy]}</td>
                  <td>{c.added.join(", ") || "—"}</td>
                  <td>{c.removed.join(", ") || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListState>
    </section>
  );
}
