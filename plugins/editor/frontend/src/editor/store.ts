// The live build state, outside React state so one event re-renders only the nodes it touches.
import { createContext, useContext, useMemo, useRef, useSyncExternalStore } from "react";
import { groupRun } from "../lib/group";
import { applyEvent, initialBuild, type BuildState, type NodeRun } from "../lib/build";
import type { BuildEvent } from "../lib/ndjson";
import type { Variable } from "../api/client";
import type { TemplateField } from "../lib/types";
import type { DragOrigin } from "../lib/compat";
import type { KeyOrigin } from "../lib/keyconnect";

export class BuildStore {
  state: BuildState = initialBuild;
  private subs = new Set<() => void>();
  subscribe = (f: () => void) => {
    this.subs.add(f);
    return () => void this.subs.delete(f);
  };
  get = () => this.state;
  set(s: BuildState) {
    this.state = s;
    this.subs.forEach((f) => f());
  }
  apply(ev: BuildEvent) {
    this.set(applyEvent(this.state, ev));
  }
}

export const BuildContext = createContext<BuildStore>(new BuildStore());

export function useBuildState(): BuildState {
  const store = useContext(BuildContext);
  return useSyncExternalStore(store.subscribe, store.get);
}

/** The inner components of a group node (a group's status follows theirs): their ids and names. */
export interface GroupMembers {
  ids: string[];
  names: Record<string, string>;
}

/** A node's run; a group's is gathered from its inner components' (re-computed only when one of them changes). */
export function useNodeRun(id: string, members?: GroupMembers | null): NodeRun | undefined {
  const store = useContext(BuildContext);
  const cache = useRef<{ members: GroupMembers; runs: (NodeRun | undefined)[]; value: NodeRun | undefined } | null>(null);
  const get = () => {
    if (!members) return store.state.nodes[id];
    const runs = members.ids.map((i) => store.state.nodes[i]);
    const c = cache.current;
    if (c && c.members === members && c.runs.every((r, k) => r === runs[k])) return c.value;
    const value = groupRun(members.ids, store.state.nodes, members.names);
    cache.current = { members, runs, value };
    return value;
  };
  return useSyncExternalStore(store.subscribe, get);
}

export interface EditorActions {
  setField(nodeId: string, field: string, patch: Partial<TemplateField>): void;
  runUpTo(nodeId: string): void;
  openBigEditor(nodeId: string, field: string): void;
  setNodeData(nodeId: string, patch: Record<string, unknown>): void;
  /** Tool Mode on or off (outputs swapped, edges from outputs that are gone removed) */
  setToolMode(nodeId: string, on: boolean): void;
  /** open the actions table of a node in Tool Mode */
  openActions(nodeId: string): void;
  duplicateNode(nodeId: string): void;
  deleteNode(nodeId: string): void;
  /** the node toolbar's code view or field controls */
  openNodeDialog(kind: "code" | "controls", nodeId: string): void;
  /** put a group's components back on the canvas */
  ungroup(nodeId: string): void;
  /** keyboard connect: from a focused handle, choose the other end in a list */
  keyConnect(origin: KeyOrigin): void;
  variables: Variable[];
  /** the variables were read once (before that no provider counts as missing) */
  variablesLoaded: boolean;
  refreshVariables(): void;
}

export const EditorContext = createContext<EditorActions | null>(null);

export function useEditor(): EditorActions {
  const c = useContext(EditorContext);
  if (!c) throw new Error("EditorContext missing");
  return c;
}

/** Which fields of each node have an incoming edge (their widget gives way to "Connected"). */
export class ConnectedStore {
  private map = new Map<string, string>();
  private subs = new Set<() => void>();
  subscribe = (f: () => void) => {
    this.subs.add(f);
    return () => void this.subs.delete(f);
  };
  get(id: string): string {
    return this.map.get(id) ?? "";
  }
  set(edges: { target: string; data?: { targetHandle?: { fieldName?: string } } }[]) {
    const acc = new Map<string, Set<string>>();
    for (const e of edges) {
      const f = e.data?.targetHandle?.fieldName;
      if (!f) continue;
      if (!acc.has(e.target)) acc.set(e.target, new Set());
      acc.get(e.target)!.add(f);
    }
    const next = new Map<string, string>();
    for (const [k, v] of acc) next.set(k, [...v].sort().join("\n"));
    this.map = next;
    this.subs.forEach((f) => f());
  }
}

export const ConnectedContext = createContext<ConnectedStore>(new ConnectedStore());

export function useConnectedFields(id: string): Set<string> {
  const store = useContext(ConnectedContext);
  const s = useSyncExternalStore(store.subscribe, () => store.get(id));
  return useMemo(() => new Set(s ? s.split("\n") : []), [s]);
}

/** The connection being dragged (null when none): every handle shows whether it would take the drop. */
export class DragStore {
  origin: DragOrigin | null = null;
  private subs = new Set<() => void>();
  subscribe = (f: () => void) => {
    this.subs.add(f);
    return () => void this.subs.delete(f);
  };
  get = () => this.origin;
  set(origin: DragOrigin | null) {
    if (origin === this.origin) return;
    this.origin = origin;
    this.subs.forEach((f) => f());
  }
}

export const DragContext = createContext<DragStore>(new DragStore());

export function useDragOrigin(): DragOrigin | null {
  const store = useContext(DragContext);
  return useSyncExternalStore(store.subscribe, store.get);
}
