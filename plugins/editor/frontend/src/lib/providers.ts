// Model providers as the user sets them up: each is a provider name of the model field plus the global
// variables the models bundle reads (its base URL, its key as a Credential). The Model providers page
// writes them through /api/v1/variables; the model picker offers the providers that are set up.

export interface ProviderKind {
  /** the provider name the model field stores and GET /api/v1/model_providers/models takes */
  name: string;
  /** the variable holding the base URL (none: a fixed endpoint) */
  urlVar?: string;
  /** the Credential variable holding the key */
  keyVar: string;
  /** whether a key is required (an OpenAI-compatible server may take none) */
  keyRequired: boolean;
  hint: string;
}

export const PROVIDER_KINDS: ProviderKind[] = [
  {
    name: "OpenAI Compatible",
    urlVar: "OPENAI_COMPATIBLE_BASE_URL",
    keyVar: "OPENAI_COMPATIBLE_API_KEY",
    keyRequired: false,
    hint: "Any server that speaks the OpenAI protocol (vLLM, LM Studio, LiteLLM, OpenRouter…), or OpenAI itself at https://api.openai.com/v1.",
  },
  { name: "OpenAI", keyVar: "OPENAI_API_KEY", keyRequired: true, hint: "OpenAI's own endpoint; only the key is needed." },
];

/** The providers whose variables exist (set up), in the page's order. */
export function configuredProviders(variableNames: Iterable<string>): string[] {
  const names = new Set(variableNames);
  return PROVIDER_KINDS.filter((p) => (p.urlVar ? names.has(p.urlVar) : names.has(p.keyVar))).map((p) => p.name);
}

/** The providers a model picker offers: those set up, plus the one the field already names. */
export function pickerProviders(configured: string[], current: string | undefined): string[] {
  return current && !configured.includes(current) ? [...configured, current] : configured;
}

/** A flow needs a provider when one of its nodes has a model field. */
export function usesModel(nodes: { type?: string; data?: { node?: { template?: Record<string, unknown> } } }[]): boolean {
  return nodes.some((n) =>
    Object.values(n.data?.node?.template ?? {}).some(
      (f) => !!f && typeof f === "object" && ((f as { type?: string }).type === "model" || (f as { _input_type?: string })._input_type === "ModelInput"),
    ),
  );
}

/**
 * Whether the server can list a provider's models for this user although no variable of the page names it
 * (an administrator configured it through the environment): asked once per page load, failures are a quiet
 * "no" (the call to action shows, no error notification).
 */
const probes = new Map<string, Promise<boolean>>();
export function probeProvider(name: string, list: (provider: string) => Promise<unknown>): Promise<boolean> {
  let p = probes.get(name);
  if (!p) {
    p = list(name).then(
      () => true,
      () => false,
    );
    probes.set(name, p);
  }
  return p;
}
