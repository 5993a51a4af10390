// The live build state, outside React state so one event re-renders only the nodes it touches.
import { createContext, useContext, useSyncExternalStore } from "react";
import { applyEvent, initialBuild, type BuildState, type NodeRun } from "../lib/build";
import type { BuildEvent } from "../lib/ndjson";
import type { Variable } from "../api/client";
import type { TemplateField } from "../lib/types";

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

export function useNodeRun(id: string): NodeRun | undefined {
  const store = useContext(BuildContext);
  return useSyncExternalStore(store.subscribe, () => store.state.nodes[id]);
}

export interface EditorActions {
  setField(nodeId: string, field: string, patch: Partial<TemplateField>): void;
  runUpTo(nodeId: string): void;
  openBigEditor(nodeId: string, field: string): void;
  setNodeData(nodeId: string, patch: Record<string, unknown>): void;
  variables: Variable[];
  refreshVariables(): void;
}

export const EditorContext = createContext<EditorActions | null>(null);

export function useEditor(): EditorActions {
  const c = useContext(EditorContext);
  if (!c) throw new Error("EditorContext missing");
  return c;
}
