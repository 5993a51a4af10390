import {
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useNodesInitialized,
  useReactFlow,
  useUpdateNodeInternals,
  type Connection,
  type EdgeChange,
  type FinalConnectionState,
  type NodeChange,
  type Edge,
  type Node,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { api, request, type Variable } from "../api/client";
import { Icon } from "../components/Icon";
import { PromptDialog } from "../components/Modal";
import { notify, notifyError } from "../components/toast";
import { Link, TopBar } from "../components/TopBar";
import { ApiPanel } from "../editor/ApiPanel";
import { AutomationDialog } from "../editor/AutomationDialog";
import { FlowSettingsDialog } from "../editor/FlowSettingsDialog";
import { ShareDialog } from "../editor/ShareDialog";
import { ConflictDialog } from "../editor/ConflictDialog";
import { HistoryDialog } from "../editor/HistoryDialog";
import { asConflict, type ConflictDetail, type Publication } from "../lib/versions";
import { GenericNode, NoteNode } from "../editor/nodes";
import { Playground } from "../editor/Playground";
import { ComponentSidebar, DRAG_MIME, catalogCategories } from "../editor/Sidebar";
import { type AffectedNode, type PollState, applyEvents, describeAffected } from "../lib/extensions";
import { BuildContext, BuildStore, ConnectedContext, ConnectedStore, DragContext, DragStore, EditorContext, type EditorActions } from "../editor/store";
import { indexCategories } from "../lib/categories";
import { currentTheme, subscribeTheme } from "../lib/theme";
import { typeColour } from "../lib/compat";
import { refreshNode } from "../lib/dynamic";
import { fillMissingOutputs, syncEdgeHandles } from "../lib/hydrate";
import { configuredProviders, PROVIDER_KINDS, probeProvider, usesModel } from "../lib/providers";
import { setToolMode, toolArgumentFields, withActions, type ToolAction } from "../lib/toolmode";
import { ToolActionsDialog } from "../editor/ToolActions";
import { ApiError } from "../lib/errors";
import {
  connect,
  copySelection,
  createNode,
  decodeHandle,
  createNote,
  defaultTweaks,
  freePosition,
  fromFlowData,
  isTemplateField,
  isValidConnection as validConnection,
  pasteClipboard,
  primaryType,
  removeNodes,
  setFieldValue,
  toFlowData,
  unknownComponents,
  type Clipboard,
} from "../lib/flow";
import { History } from "../lib/history";
import { resolveOverlaps } from "../lib/layout";
import { groupNodes, groupStopId, isGroup, ungroupNode, type GroupResult } from "../lib/group";
import { syncPromptFields } from "../lib/prompt";
import type { Catalog, FlowData, FlowEdge, FlowNode, FlowRecord, FrontendNode, SourceHandle, TargetHandle, TemplateField } from "../lib/types";
import { useSession } from "../session";
import { EXTENSION_POLL_MS, NOTE_SIZE, clearDraft, isEditable, lookupCatalog, readDraft, writeDraft } from "../editor/drafts";
import { BigEditor, ShortcutSheet } from "../editor/EditorDialogs";
import { KeyConnectDialog } from "../editor/KeyConnectDialog";
import type { KeyOrigin } from "../lib/keyconnect";
import { CodeView, ControlsDialog, type NodeDialogKind } from "../editor/NodeDialogs";
import { useBuild } from "../editor/useBuild";

const nodeTypes = { genericNode: GenericNode, noteNode: NoteNode };

/** The roles of a flow shared through a team that open it read-only (they may not change it: 403). */
const READ_ONLY_ROLES = new Set(["viewer", "run-only"]);

/** The caller's role on a flow shared with them (``shared_role`` of the flow's read), null for their own. */
function sharedRole(flow: FlowRecord): string | null {
  return typeof flow.shared_role === "string" && flow.shared_role ? flow.shared_role : null;
}

/** What a read-only member is told (the banner, and when they try an edit). */
function roleNotice(role: string | null): string {
  return `Shared with you as ${role}: you can ${role === "viewer" ? "view" : "run"} this flow but not change it.`;
}

type Snapshot = { nodes: FlowNode[]; edges: FlowEdge[] };
type SaveState = "saved" | "dirty" | "saving" | "error";

export default function EditorPage({ flowId }: { flowId: string }) {
  const [flow, setFlow] = useState<FlowRecord | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [catalog, setCatalog] = useState<Catalog | null>(null);
  const [catalogError, setCatalogError] = useState<string | null>(null);

  const [affected, setAffected] = useState<AffectedNode[]>([]);

  const loadCatalog = useCallback(() => {
    api
      .components()
      .then((c) => {
        setCatalog(c);
        setCatalogError(null);
      })
      .catch((e) => setCatalogError(`Components could not be loaded: ${(e as Error).message}`));
  }, []);

  useEffect(() => {
    api
      .readFlow(flowId)
      .then(setFlow)
      .catch((e) => setError(e instanceof ApiError && e.status === 404 ? "This flow does not exist, or it belongs to someone else." : (e as Error).message));
    loadCatalog();
  }, [flowId, loadCatalog]);

  // Bundle reloads while the flow is open: refresh the palette, show the nodes a reload touched.
  useEffect(() => {
    let state: PollState = { cursor: Date.now() / 1000, generation: null };
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () => {
      api
        .extensionEvents(state.cursor)
        .then((answer) => {
          if (stopped) return;
          const out = applyEvents(state, answer, flowId);
          state = out.state;
          if (out.refreshCatalog) loadCatalog();
          if (out.affected.length) setAffected((prev) => [...out.affected, ...prev.filter((p) => !out.affected.some((a) => a.id === p.id))]);
          timer = setTimeout(poll, EXTENSION_POLL_MS);
        })
        .catch((e) => {
          // the extensions plugin is off (404) or the caller cannot read events: stop asking
          if (stopped || (e instanceof ApiError && (e.status === 404 || e.status === 403))) return;
          timer = setTimeout(poll, EXTENSION_POLL_MS * 3);
        });
    };
    timer = setTimeout(poll, EXTENSION_POLL_MS);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [flowId, loadCatalog]);

  if (error)
    return (
      <div className="app-shell">
        <TopBar />
        <div className="splash">
          <h1>Cannot open the flow</h1>
          <p role="alert">{error}</p>
          <Link to="/">Back to your flows</Link>
        </div>
      </div>
    );
  // the canvas waits for the catalog too (or its failure): nodes exported without outputs take them from it
  if (!flow || (!catalog && !catalogError)) return <div className="splash" aria-busy="true">Opening the flow…</div>;
  return (
    <ReactFlowProvider>
      <EditorInner initial={flow} catalog={catalog} catalogError={catalogError} affected={affected} onDismissAffected={() => setAffected([])} />
    </ReactFlowProvider>
  );
}

function EditorInner({
  initial,
  catalog,
  catalogError,
  affected,
  onDismissAffected,
}: {
  initial: FlowRecord;
  catalog: Catalog | null;
  catalogError: string | null;
  affected: AffectedNode[];
  onDismissAffected: () => void;
}) {
  const session = useSession();
  const rf = useReactFlow();
  const flowId = initial.id;
  const [flow, setFlow] = useState(initial);
  // a flow shared with the caller through a team: their role (the server's ``shared_role``); a viewer or a
  // run-only member opens it read-only, as a locked flow (no edits, no saves, no drafts)
  const role = sharedRole(initial);
  const readOnly = READ_ONLY_ROLES.has(role ?? "");
  const readOnlyRef = useRef(readOnly);
  readOnlyRef.current = readOnly;
  const lockedRef = useRef(false);
  lockedRef.current = Boolean(flow.locked) || readOnly;
  const refuseLocked = useCallback(() => {
    if (readOnlyRef.current) notify("info", roleNotice(role));
    else if (lockedRef.current) notify("info", "This flow is locked: unlock it in Settings to edit it.");
    return lockedRef.current;
  }, [role]);

  const start = useMemo(() => {
    const draft = readDraft(flowId);
    const serverTs = initial.updated_at ? Date.parse(initial.updated_at) : 0;
    // a read-only caller never takes a draft up (nothing of it could be saved)
    const restored = !readOnly && !!draft && draft.ts > serverTs;
    if (draft && !restored) clearDraft(flowId);
    const loaded = fromFlowData(restored && draft ? draft.data : initial.data);
    // notes saved without a size (starters, other editors) get a readable one
    const sized = loaded.nodes.map((n) => (n.type === "noteNode" && !n.width ? { ...n, width: NOTE_SIZE.width, height: NOTE_SIZE.height } : n));
    const nodes = fillMissingOutputs(sized, (key) => lookupCatalog(catalog, key)).nodes;
    return { ...loaded, nodes, edges: syncEdgeHandles(nodes, loaded.edges), restored };
    // the catalog only seeds the first state; a later catalog (bundle reload) goes through the effect below
  }, [flowId, initial, readOnly]);

  const [nodes, setNodes] = useState<FlowNode[]>(start.nodes);
  const [edges, setEdges] = useState<FlowEdge[]>(start.edges);
  const [saveState, setSaveState] = useState<SaveState>(start.restored ? "dirty" : "saved");
  const [version, setVersion] = useState(0); // bumps on every content change
  const [historyFlags, setHistoryFlags] = useState({ undo: false, redo: false });
  const [showPlayground, setShowPlayground] = useState(false);
  const [showApi, setShowApi] = useState(false);
  const [showAutomation, setShowAutomation] = useState(false);
  const [playgroundSeed, setPlaygroundSeed] = useState<{ n: number; text: string }>({ n: 0, text: "" });
  const [showShare, setShowShare] = useState(false);
  const [showHistory, setShowHistory] = useState(false);
  const [conflict, setConflict] = useState<ConflictDetail | null>(null);
  const [published, setPublished] = useState<string | null>(null); // the published version's tag
  const tokenRef = useRef<string | null>((initial.version_token as string | null | undefined) ?? null);
  // the graph as the server last had it from here (loaded or saved): the base of a conflict's merge
  const baseRef = useRef<FlowData | null>((initial.data as FlowData | null | undefined) ?? null);
  useEffect(() => {
    // the published badge (no versions plugin: 404, no badge)
    request<Publication>(`/api/v1/flows/${flowId}/publish`).then(
      (p) => setPublished(p.published && p.version ? p.version.version_tag : null),
      () => undefined,
    );
  }, [flowId]);
  const [showSettings, setShowSettings] = useState(false);
  const [showKeys, setShowKeys] = useState(false);
  const theme = useSyncExternalStore(subscribeTheme, currentTheme);
  const [renaming, setRenaming] = useState(false);
  const [bigEditor, setBigEditor] = useState<{ nodeId: string; field: string } | null>(null);
  const [actionsFor, setActionsFor] = useState<string | null>(null);
  const [nodeDialog, setNodeDialog] = useState<{ kind: NodeDialogKind; nodeId: string } | null>(null);
  const [keyOrigin, setKeyOrigin] = useState<KeyOrigin | null>(null);
  const [variables, setVariables] = useState<Variable[]>([]);
  const [variablesLoaded, setVariablesLoaded] = useState(false);

  const nodesRef = useRef(nodes);
  const edgesRef = useRef(edges);
  nodesRef.current = nodes;
  edgesRef.current = edges;
  const history = useRef(new History<Snapshot>(200));
  const lastPush = useRef<{ at: number; key: string }>({ at: 0, key: "" });
  const clipboard = useRef<Clipboard | null>(null);
  const wrapper = useRef<HTMLDivElement>(null);
  const buildStore = useMemo(() => new BuildStore(), []);
  const connectedStore = useMemo(() => new ConnectedStore(), []);
  const dragStore = useMemo(() => new DragStore(), []);
  useEffect(() => connectedStore.set(edges), [edges, connectedStore]);

  useEffect(() => {
    if (start.restored) notify("info", "Restored changes that were not saved yet.");
  }, [start.restored]);

  const refreshVariables = useCallback(() => {
    api
      .listVariables()
      .then((v) => {
        setVariables(v);
        setVariablesLoaded(true);
      })
      .catch(() => undefined);
  }, []);
  useEffect(refreshVariables, [refreshVariables]);

  // ---- history ------------------------------------------------------------------------------------
  /** Record an undo point. Calls with the same key within `coalesceMs` form one step (typing, one delete). */
  const pushHistory = useCallback((key = "", coalesceMs = 40) => {
    const now = Date.now();
    if (now - lastPush.current.at < coalesceMs && lastPush.current.key === key) {
      lastPush.current.at = now;
      return;
    }
    lastPush.current = { at: now, key };
    history.current.push({ nodes: nodesRef.current, edges: edgesRef.current });
    setHistoryFlags({ undo: true, redo: false });
  }, []);

  const changed = useCallback(() => {
    setSaveState("dirty");
    setVersion((v) => v + 1);
  }, []);

  const replace = useCallback(
    (s: Snapshot) => {
      nodesRef.current = s.nodes;
      edgesRef.current = s.edges;
      setNodes(s.nodes);
      setEdges(s.edges);
      changed();
    },
    [changed],
  );

  const undo = useCallback(() => {
    const prev = history.current.undo({ nodes: nodesRef.current, edges: edgesRef.current });
    if (prev) replace(prev);
    lastPush.current = { at: 0, key: "" };
    setHistoryFlags({ undo: history.current.canUndo, redo: history.current.canRedo });
  }, [replace]);

  const redo = useCallback(() => {
    const next = history.current.redo({ nodes: nodesRef.current, edges: edgesRef.current });
    if (next) replace(next);
    setHistoryFlags({ undo: history.current.canUndo, redo: history.current.canRedo });
  }, [replace]);

  // ---- graph edits ----------------------------------------------------------------------------------
  const onNodesChange = useCallback(
    (changes: NodeChange[]) => {
      const removing = changes.filter((c) => c.type === "remove").map((c) => (c as { id: string }).id);
      if (removing.length) {
        pushHistory("delete");
        const next = removeNodes(nodesRef.current, edgesRef.current, removing);
        nodesRef.current = next.nodes;
        edgesRef.current = next.edges;
        setEdges(next.edges);
      }
      const rest = changes.filter((c) => c.type !== "remove");
      const next = rest.length ? (applyNodeChanges(rest as NodeChange<Node>[], nodesRef.current as unknown as Node[]) as unknown as FlowNode[]) : nodesRef.current;
      nodesRef.current = next;
      setNodes(next);
      if (removing.length || changes.some((c) => c.type === "position" && !c.dragging && c.position) || changes.some((c) => c.type === "dimensions" && c.resizing))
        changed();
    },
    [pushHistory, changed],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      const removing = changes.some((c) => c.type === "remove" && edgesRef.current.some((e) => e.id === c.id));
      if (removing) pushHistory("delete");
      const next = applyEdgeChanges(changes as EdgeChange<Edge>[], edgesRef.current as unknown as Edge[]) as unknown as FlowEdge[];
      edgesRef.current = next;
      setEdges(next);
      if (removing) changed();
    },
    [pushHistory, changed],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      const result = connect(nodesRef.current, edgesRef.current, {
        source: c.source,
        target: c.target,
        sourceHandle: c.sourceHandle ?? "",
        targetHandle: c.targetHandle ?? "",
      });
      if (!result.ok) return notify("error", result.reason);
      pushHistory("connect", 0);
      const gone = new Set(result.replaced);
      const next = [...edgesRef.current.filter((e) => !gone.has(e.id)), result.edge];
      edgesRef.current = next;
      setEdges(next);
      changed();
    },
    [pushHistory, changed],
  );

  // live feedback while a connection is dragged: every handle shows whether it would take the drop
  const onConnectStart = useCallback(
    (_: unknown, p: { nodeId: string | null; handleId: string | null; handleType: "source" | "target" | null }) => {
      if (!p.nodeId || !p.handleId || !p.handleType) return;
      const h = decodeHandle<SourceHandle & TargetHandle>(p.handleId);
      if (!h) return;
      const types = p.handleType === "source" ? h.output_types : h.inputTypes;
      dragStore.set({ nodeId: p.nodeId, handleType: p.handleType, types: types ?? [] });
    },
    [dragStore],
  );

  // a drop on a handle that refuses it says why (a drop on the empty canvas says nothing)
  const onConnectEnd = useCallback(
    (_: unknown, state: FinalConnectionState) => {
      dragStore.set(null);
      if (!state.toHandle || state.isValid || !state.fromHandle) return;
      const [from, to] = [state.fromHandle, state.toHandle];
      const [src, tgt] = from.type === "source" ? [from, to] : [to, from];
      if (src.type !== "source" || tgt.type !== "target") return notify("error", "Connect an output (right side) to an input (left side).");
      const result = connect(nodesRef.current, edgesRef.current, { source: src.nodeId, target: tgt.nodeId, sourceHandle: src.id ?? "", targetHandle: tgt.id ?? "" });
      if (!result.ok) notify("error", `Not connected: ${result.reason}`);
    },
    [dragStore],
  );

  // keyboard connect: the handle's hints show as while dragging, the dialog lists the other ends
  const keyConnect = useCallback(
    (origin: KeyOrigin) => {
      if (refuseLocked()) return;
      const h = decodeHandle<SourceHandle & TargetHandle>(origin.handleId);
      if (!h) return;
      dragStore.set({ nodeId: origin.nodeId, handleType: origin.handleType, types: (origin.handleType === "source" ? h.output_types : h.inputTypes) ?? [] });
      setKeyOrigin(origin);
    },
    [dragStore, refuseLocked],
  );
  const endKeyConnect = useCallback(() => {
    dragStore.set(null);
    setKeyOrigin((origin) => {
      // focus goes back to the handle the connection started from (the node re-rendered meanwhile)
      if (origin)
        setTimeout(() => {
          const el = [...document.querySelectorAll<HTMLElement>(".react-flow__handle")].find(
            (h) => h.dataset.nodeid === origin.nodeId && h.dataset.handleid === origin.handleId,
          );
          el?.focus();
        }, 0);
      return null;
    });
  }, [dragStore]);

  const isValidConnection = useCallback(
    (c: Connection | Edge) => validConnection(nodesRef.current, { source: c.source, target: c.target, sourceHandle: c.sourceHandle ?? "", targetHandle: c.targetHandle ?? "" }),
    [],
  );

  const addNodes = useCallback(
    (added: FlowNode[], addedEdges: FlowEdge[] = []) => {
      if (refuseLocked()) return;
      pushHistory("add", 0);
      const nextNodes = [...nodesRef.current.map((n) => (n.selected ? { ...n, selected: false } : n)), ...added];
      const nextEdges = [...edgesRef.current, ...addedEdges];
      nodesRef.current = nextNodes;
      edgesRef.current = nextEdges;
      setNodes(nextNodes);
      setEdges(nextEdges);
      changed();
    },
    [pushHistory, changed],
  );

  const centerPosition = useCallback(() => {
    const r = wrapper.current?.getBoundingClientRect();
    const p = r ? rf.screenToFlowPosition({ x: r.left + r.width / 2, y: r.top + r.height / 3 }) : { x: 0, y: 0 };
    return freePosition({ x: p.x - 150, y: p.y - 60 }, nodesRef.current);
  }, [rf]);

  const addComponent = useCallback(
    (key: string, node: FrontendNode, position?: { x: number; y: number }) => {
      const taken = new Set(nodesRef.current.map((n) => n.id));
      const created = refreshNode(createNode(key, node, position ?? centerPosition(), taken));
      addNodes([{ ...created, selected: true }]);
      if (!position) {
        // bring a keyboard-added node into view
        const { zoom } = rf.getViewport();
        void rf.setCenter(created.position.x + 150, created.position.y + 120, { zoom, duration: 200 });
      }
    },
    [addNodes, centerPosition, rf],
  );

  const addNote = useCallback(() => {
    const note = { ...createNote(centerPosition(), "", new Set(nodesRef.current.map((n) => n.id))), width: NOTE_SIZE.width, height: NOTE_SIZE.height, selected: true };
    addNodes([note]);
    // it lands in view, like a component added with the keyboard
    const { zoom } = rf.getViewport();
    void rf.setCenter(note.position.x + NOTE_SIZE.width / 2, note.position.y + NOTE_SIZE.height / 2, { zoom, duration: 200 });
  }, [addNodes, centerPosition, rf]);

  const findCatalogNode = useCallback((key: string): FrontendNode | null => lookupCatalog(catalog, key), [catalog]);

  // Nodes exported with empty `outputs` (no handles, so no edges drawn) take their outputs from the catalog.
  const updateNodeInternals = useUpdateNodeInternals();
  useEffect(() => {
    if (!catalog) return;
    const { nodes: filled, changed: touched } = fillMissingOutputs(nodesRef.current, findCatalogNode);
    const synced = syncEdgeHandles(filled, edgesRef.current);
    if (!touched.length && synced === edgesRef.current) return;
    nodesRef.current = filled;
    edgesRef.current = synced;
    setNodes(filled);
    setEdges(synced);
    if (touched.length) requestAnimationFrame(() => updateNodeInternals(touched));
  }, [catalog, findCatalogNode, updateNodeInternals]);

  const setField = useCallback(
    (nodeId: string, field: string, patch: Partial<TemplateField>) => {
      if (refuseLocked()) return;
      pushHistory(`field:${nodeId}:${field}`, 1500);
      let droppedOutputs: Set<string> | null = null;
      const next = nodesRef.current.map((n) => {
        if (n.id !== nodeId) return n;
        let updated = refreshNode(setFieldValue(n, field, patch), field);
        const tf = updated.data.node.template[field];
        if (isTemplateField(tf) && (tf.type === "prompt" || tf._input_type === "PromptInput")) updated = syncPromptFields(updated, field);
        const names = new Set((updated.data.node.outputs ?? []).map((o) => o.name));
        if ((n.data.node.outputs ?? []).some((o) => !names.has(o.name))) droppedOutputs = names;
        return updated;
      });
      nodesRef.current = next;
      setNodes(next);
      const keep = droppedOutputs as Set<string> | null;
      if (keep) {
        const e2 = edgesRef.current.filter((e) => e.source !== nodeId || keep.has(e.data.sourceHandle.name));
        edgesRef.current = e2;
        setEdges(e2);
      }
      // a field that is now hidden or gone loses its edges
      const tn = next.find((n) => n.id === nodeId);
      const e3 = edgesRef.current.filter((e) => {
        if (e.target !== nodeId || !tn) return true;
        const f = tn.data.node.template[e.data.targetHandle.fieldName];
        return isTemplateField(f) && f.show !== false;
      });
      if (e3.length !== edgesRef.current.length) {
        edgesRef.current = e3;
        setEdges(e3);
      }
      changed();
    },
    [pushHistory, changed],
  );

  const setNodeData = useCallback(
    (nodeId: string, patch: Record<string, unknown>) => {
      if (refuseLocked()) return;
      pushHistory(`data:${nodeId}`, 1500);
      const next = nodesRef.current.map((n) => (n.id === nodeId ? { ...n, data: { ...n.data, ...patch } } : n));
      nodesRef.current = next;
      setNodes(next);
      changed();
    },
    [pushHistory, changed],
  );

  const toggleToolMode = useCallback(
    (nodeId: string, on: boolean) => {
      if (refuseLocked()) return;
      pushHistory("toolmode", 0);
      const next = nodesRef.current.map((n) => (n.id === nodeId ? setToolMode(n, on, lookupCatalog(catalog, n.data.type)) : n));
      const node = next.find((n) => n.id === nodeId);
      const names = new Set((node?.data.node.outputs ?? []).map((o) => o.name));
      const args = node && on ? toolArgumentFields(node.data.node) : new Set<string>();
      // outputs that are gone lose their edges; so do the fields the agent now fills
      const kept = edgesRef.current.filter(
        (e) => !((e.source === nodeId && !names.has(e.data.sourceHandle.name)) || (e.target === nodeId && args.has(e.data.targetHandle.fieldName))),
      );
      nodesRef.current = next;
      edgesRef.current = kept;
      setNodes(next);
      setEdges(kept);
      requestAnimationFrame(() => updateNodeInternals(nodeId));
      changed();
    },
    [pushHistory, changed, catalog, updateNodeInternals],
  );

  const saveActions = useCallback(
    (nodeId: string, rows: ToolAction[]) => {
      pushHistory("actions", 0);
      const next = nodesRef.current.map((n) => (n.id === nodeId ? withActions(n, rows) : n));
      nodesRef.current = next;
      setNodes(next);
      changed();
    },
    [pushHistory, changed],
  );

  const deleteNode = useCallback(
    (nodeId: string) => {
      if (refuseLocked()) return;
      pushHistory("delete", 0);
      const next = removeNodes(nodesRef.current, edgesRef.current, [nodeId]);
      nodesRef.current = next.nodes;
      edgesRef.current = next.edges;
      setNodes(next.nodes);
      setEdges(next.edges);
      changed();
    },
    [pushHistory, changed],
  );

  const duplicateNode = useCallback(
    (nodeId: string) => {
      const clip = copySelection(nodesRef.current, edgesRef.current, [nodeId]);
      const pasted = pasteClipboard(clip, nodesRef.current, { x: 40, y: 40 });
      addNodes(pasted.nodes, pasted.edges);
    },
    [addNodes],
  );

  // ---- layout repair on load: components drawn over each other are moved apart, once measured ----------
  const nodesInitialized = useNodesInitialized();
  const laidOut = useRef(false);
  useEffect(() => {
    if (!nodesInitialized || laidOut.current) return;
    // wait until our state holds every component's measured size (a large flow draws only what is visible: skip)
    const components = nodes.filter((n) => n.type === "genericNode");
    if (components.length <= 60 && components.some((n) => !n.measured?.width)) return;
    laidOut.current = true;
    if (components.length > 60) return;
    const next = resolveOverlaps(nodesRef.current);
    if (next === nodesRef.current || lockedRef.current) return;
    nodesRef.current = next;
    setNodes(next);
    changed();
  }, [nodesInitialized, nodes, changed]);

  // ---- groups (Ctrl+G) ----------------------------------------------------------------------------------
  const applyGraph = useCallback(
    (key: string, r: GroupResult) => {
      if (!r.ok) return notify("info", r.reason);
      pushHistory(key, 0);
      nodesRef.current = r.nodes;
      edgesRef.current = r.edges;
      setNodes(r.nodes);
      setEdges(r.edges);
      changed();
      requestAnimationFrame(() => updateNodeInternals(r.nodes.filter((n) => n.selected).map((n) => n.id)));
    },
    [pushHistory, changed, updateNodeInternals],
  );
  const groupSelection = useCallback(() => {
    if (refuseLocked()) return;
    const ids = nodesRef.current.filter((n) => n.selected).map((n) => n.id);
    applyGraph("group", groupNodes(nodesRef.current, edgesRef.current, ids));
  }, [applyGraph, refuseLocked]);
  const ungroup = useCallback(
    (nodeId: string) => {
      if (refuseLocked()) return;
      applyGraph("ungroup", ungroupNode(nodesRef.current, edgesRef.current, nodeId));
    },
    [applyGraph, refuseLocked],
  );

  // ---- save ------------------------------------------------------------------------------------------
  const currentData = useCallback(() => toFlowData(nodesRef.current, edgesRef.current, rf.getViewport()), [rf]);
  const savingRef = useRef<Promise<void> | null>(null);
  const savedVersion = useRef(start.restored ? -1 : 0);
  const versionRef = useRef(version);
  versionRef.current = version;

  const save = useCallback(async () => {
    if (readOnlyRef.current) return; // the server would refuse it (403): nothing is sent
    if (savingRef.current) await savingRef.current;
    const v = versionRef.current;
    if (v === savedVersion.current) return;
    setSaveState("saving");
    const p = (async () => {
      try {
        const data = currentData();
        const updated = await api.updateFlow(flowId, { data }, tokenRef.current);
        tokenRef.current = updated.version_token ?? tokenRef.current;
        baseRef.current = data;
        savedVersion.current = v;
        setFlow((f) => ({ ...f, ...updated, data: undefined }));
        if (versionRef.current === v) {
          setSaveState("saved");
          clearDraft(flowId);
        } else setSaveState("dirty");
      } catch (e) {
        setSaveState("error");
        const refused = e instanceof ApiError && e.status === 409 ? asConflict(e.body) : null;
        if (refused) setConflict(refused);
        else notifyError(e, "Saving failed (your changes are kept in this browser)");
      }
    })();
    savingRef.current = p;
    await p;
    savingRef.current = null;
  }, [flowId, currentData]);

  // show the server's flow (after a restore or a merge, or to take theirs): this canvas's edits are settled,
  // so neither the unload guard nor the next load may bring them back as a local draft over the server's
  // set once the page reloads what the server holds: no draft may be written after that (a draft timer firing
  // between the reload's call and the unload wrote the pre-merge canvas back, and the reloaded page restored it
  // over the merged flow and saved it: the other side's work was lost)
  const discardingRef = useRef(false);
  const leaveFor = useCallback(
    (url: string | null) => {
      discardingRef.current = true;
      savedVersion.current = versionRef.current;
      clearDraft(flowId);
      if (url === null) window.location.reload();
      else window.location.assign(url);
    },
    [flowId],
  );
  const reloadFromServer = useCallback(() => leaveFor(null), [leaveFor]);

  // keep a local draft of unsaved changes (survives a reload or a crash)
  useEffect(() => {
    if (saveState !== "dirty" && saveState !== "error") return;
    if (readOnlyRef.current) return;
    const t = setTimeout(() => {
      if (!discardingRef.current) writeDraft(flowId, currentData());
    }, 250);
    return () => clearTimeout(t);
  }, [version, saveState, flowId, currentData]);

  // auto-save following the server configuration
  const autoSaving = session.config.auto_saving !== false;
  const interval = Math.max(300, Number(session.config.auto_saving_interval ?? 1000));
  useEffect(() => {
    if (!autoSaving || saveState !== "dirty" || readOnlyRef.current) return;
    const t = setTimeout(() => void save(), interval);
    return () => clearTimeout(t);
  }, [version, saveState, autoSaving, interval, save]);

  useEffect(() => {
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      if (discardingRef.current || readOnlyRef.current || versionRef.current === savedVersion.current) return;
      writeDraft(flowId, currentData());
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [flowId, currentData]);

  // leaving the page inside the app: save what is pending
  useEffect(
    () => () => {
      if (!discardingRef.current && !readOnlyRef.current && versionRef.current !== savedVersion.current) {
        writeDraft(flowId, toFlowData(nodesRef.current, edgesRef.current));
        void api.updateFlow(flowId, { data: toFlowData(nodesRef.current, edgesRef.current) }, tokenRef.current).then(() => clearDraft(flowId), () => undefined);
      }
    },
    [flowId],
  );

  // ---- build -----------------------------------------------------------------------------------------
  const { running, archive, pausedJobRef, runBuild, followJob, stopBuild } = useBuild(buildStore, flowId, currentData);

  const runUpTo = useCallback(
    (nodeId: string) => {
      const n = nodesRef.current.find((x) => x.id === nodeId);
      void runBuild({ stopId: n && isGroup(n) ? groupStopId(n) : nodeId }); // the server runs a group as its inner nodes
    },
    [runBuild],
  );

  // ---- clipboard & keyboard ----------------------------------------------------------------------------
  const copy = useCallback(() => {
    const ids = nodesRef.current.filter((n) => n.selected).map((n) => n.id);
    if (!ids.length) return false;
    clipboard.current = copySelection(nodesRef.current, edgesRef.current, ids);
    try {
      void navigator.clipboard?.writeText(JSON.stringify({ service_clipboard: clipboard.current }));
    } catch {
      /* the in-memory clipboard is enough */
    }
    return true;
  }, []);

  const paste = useCallback(() => {
    if (!clipboard.current?.nodes.length) return;
    const pasted = pasteClipboard(clipboard.current, nodesRef.current, { x: 40, y: 40 });
    clipboard.current = { nodes: pasted.nodes.map((n) => ({ ...n, selected: false })), edges: pasted.edges };
    addNodes(pasted.nodes, pasted.edges);
  }, [addNodes]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (!mod && e.key === "?" && !isEditable(e.target) && !document.querySelector(".modal-backdrop")) {
        e.preventDefault();
        setShowKeys(true);
        return;
      }
      if (!mod) return;
      const k = e.key.toLowerCase();
      if (k === "s") {
        e.preventDefault();
        void save();
        return;
      }
      if (isEditable(e.target) || document.querySelector(".modal-backdrop")) return;
      if (k === "z" && !e.shiftKey) (e.preventDefault(), undo());
      else if ((k === "z" && e.shiftKey) || k === "y") (e.preventDefault(), redo());
      else if (k === "g" && !e.shiftKey) (e.preventDefault(), groupSelection());
      else if (k === "g" && e.shiftKey) {
        e.preventDefault();
        const g = nodesRef.current.find((n) => n.selected && isGroup(n));
        if (g) ungroup(g.id);
      } else if (k === "c") copy() && e.preventDefault();
      else if (k === "v") (e.preventDefault(), paste());
      else if (k === "d") {
        e.preventDefault();
        if (copy()) paste();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [save, undo, redo, copy, paste, groupSelection, ungroup]);

  // ---- view --------------------------------------------------------------------------------------------
  const styledEdges = useMemo(
    () =>
      edges.map((e) => ({
        ...e,
        style: { stroke: typeColour(primaryType(e.data?.sourceHandle?.output_types)), strokeWidth: e.selected ? 3 : 2 },
        animated: running,
      })),
    [edges, running],
  );

  const actions: EditorActions = useMemo(
    () => ({
      setField,
      runUpTo,
      openBigEditor: (nodeId, field) => setBigEditor({ nodeId, field }),
      setNodeData,
      setToolMode: toggleToolMode,
      openActions: (nodeId) => setActionsFor(nodeId),
      duplicateNode,
      deleteNode,
      ungroup,
      openNodeDialog: (kind, nodeId) => setNodeDialog({ kind, nodeId }),
      keyConnect,
      variables,
      variablesLoaded,
      refreshVariables,
    }),
    [setField, runUpTo, setNodeData, toggleToolMode, duplicateNode, deleteNode, ungroup, keyConnect, variables, variablesLoaded, refreshVariables],
  );

  const known = useMemo(() => {
    const cats = catalogCategories(catalog);
    indexCategories(cats); // the node icons read it
    return new Set(cats.flatMap(([, entries]) => entries.map(([k]) => k)));
  }, [catalog]);
  const missing = useMemo(() => (catalog ? unknownComponents(nodes, known) : []), [catalog, nodes, known]);
  const selectedComponents = useMemo(() => nodes.reduce((k, n) => k + (n.selected && n.type === "genericNode" ? 1 : 0), 0), [nodes]);
  const hasChatInput = useMemo(() => nodes.some((n) => n.data?.type === "ChatInput"), [nodes]);
  const flowUsesModel = useMemo(() => usesModel(nodes), [nodes]);
  // null while the server is asked whether it has a provider from its environment
  const [serverProvider, setServerProvider] = useState<boolean | null>(null);
  const noVariableProvider = variablesLoaded && configuredProviders(variables.map((v) => v.name)).length === 0;
  useEffect(() => {
    if (!flowUsesModel || !noVariableProvider) return;
    void probeProvider(PROVIDER_KINDS[0].name, api.modelList).then(setServerProvider);
  }, [flowUsesModel, noVariableProvider]);
  const needsProvider = flowUsesModel && noVariableProvider && serverProvider === false;
  const hasWebhook = useMemo(() => nodes.some((n) => n.data?.type === "Webhook"), [nodes]);
  const tweaks = useMemo(() => (showApi ? defaultTweaks(nodes) : {}), [showApi, nodes]);

  const locked = Boolean(flow.locked) || readOnly;
  const statusText = readOnly
    ? "Read only"
    : saveState === "saved"
      ? "Saved"
      : saveState === "saving"
        ? "Saving…"
        : saveState === "error"
          ? "Not saved"
          : "Unsaved changes";

  return (
    <EditorContext.Provider value={actions}>
      <BuildContext.Provider value={buildStore}>
      <ConnectedContext.Provider value={connectedStore}>
      <DragContext.Provider value={dragStore}>
        <div className="app-shell editor-shell">
          <TopBar>
            <nav className="crumbs" aria-label="Breadcrumb">
              <Link to={flow.folder_id ? `/projects/${flow.folder_id}` : "/"}>Flows</Link>
              <span aria-hidden>/</span>
              <button className="flow-name" onClick={() => (readOnly ? notify("info", roleNotice(role)) : setRenaming(true))} title={readOnly ? flow.name : `${flow.name}: click to rename`} aria-label={readOnly ? `Flow ${flow.name}` : `Flow ${flow.name}, rename`} data-testid="flow-name">
                {flow.name}
              </button>
            </nav>
            {role && (
              <span className="badge" data-testid="role-badge" title={`Shared with you: your role on this flow is ${role}`}>
                {role}
              </span>
            )}
            {published && (
              <span className="badge badge-published" data-testid="published-badge" title="API callers run this version; the editor runs the draft">
                Published {published}
              </span>
            )}
            <span className={`save-state save-${saveState}`} role="status" data-testid="save-state" title={readOnly ? roleNotice(role) : `${statusText}: ${autoSaving ? "changes save automatically" : "press Ctrl+S to save"}`}>
              <span className="save-text">{statusText}</span>
            </span>
            <div className="toolbar" role="toolbar" aria-label="Editor">
              <button className="btn btn-ghost" onClick={undo} disabled={!historyFlags.undo} title="Undo (Ctrl+Z)">
                Undo
              </button>
              <button className="btn btn-ghost" onClick={redo} disabled={!historyFlags.redo} title="Redo (Ctrl+Shift+Z)">
                Redo
              </button>
              <button className="btn" onClick={() => void save()} disabled={readOnly || saveState === "saved" || saveState === "saving"} title="Save (Ctrl+S)">
                Save
              </button>
              <button className="btn" onClick={() => setShowSettings(true)} title="Flow type, A2A publishing and the agent card">
                Settings
              </button>
              <button className="btn" onClick={() => setShowShare(true)}>
                Share
              </button>
              <button className="btn" onClick={() => setShowHistory(true)} title="Versions, changes, restore and publishing" data-testid="history-button">
                History
              </button>
              <button className="btn btn-ghost" onClick={() => setShowKeys(true)} title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts">
                <Icon name="keyboard" size={16} />
              </button>
              <button className="btn" onClick={() => setShowApi(true)}>
                API
              </button>
              <Link to={`/flow/${flowId}/activity`} className="btn" title="Runs of this flow: status, duration, tokens and each run's spans" data-testid="activity-button">
                Activity
              </Link>
              <button className="btn btn-automation" onClick={() => setShowAutomation(true)} title="Automation: executions, schedules, signed webhooks and the retry policy" aria-label="Automation">
                <Icon name="clock" size={16} />
                <span className="btn-label">Automation</span>
              </button>
              {running ? (
                <button className="btn btn-danger" onClick={() => void stopBuild()}>
                  Stop
                </button>
              ) : (
                <button className="btn" onClick={() => void runBuild({})} title="Build the whole flow">
                  Run
                </button>
              )}
              <button className={`btn btn-primary${showPlayground ? " active" : ""}`} onClick={() => setShowPlayground((v) => !v)} aria-pressed={showPlayground}>
                Playground
              </button>
            </div>
          </TopBar>
          {affected.length > 0 && (
            <div className="banner banner-warn" role="status" data-testid="reload-affected">
              A bundle reload changed components this flow uses: {describeAffected(affected)}. Check these nodes.{" "}
              <button className="btn btn-small" onClick={onDismissAffected}>
                Dismiss
              </button>
            </div>
          )}
          {readOnly ? (
            <div className="banner banner-info" role="status" data-testid="role-banner">
              {roleNotice(role)}
            </div>
          ) : (
            locked && (
              <div className="banner banner-info" role="status" data-testid="locked-banner">
                This flow is locked: unlock it in Settings to edit it. It still runs.
              </div>
            )
          )}
          {needsProvider && (
            <div className="banner banner-info" role="status" data-testid="provider-cta">
              This flow uses a language model, and no model provider is set up yet.{" "}
              <Link to="/settings/model-providers" className="btn btn-small btn-primary">
                Set up a model provider
              </Link>
            </div>
          )}
          {missing.length > 0 && (
            <div className="banner banner-warn" role="alert">
              Not available on this server: {missing.join(", ")}. The flow cannot run until these components are replaced.
            </div>
          )}
          <div className="editor">
            <ComponentSidebar catalog={catalog} error={catalogError} onAdd={(k, n) => addComponent(k, n)} onAddNote={addNote} />
            <div
              className={`canvas${locked ? " canvas-locked" : ""}`}
              ref={wrapper}
              onDragOver={(e) => {
                if (e.dataTransfer.types.includes(DRAG_MIME)) {
                  e.preventDefault();
                  e.dataTransfer.dropEffect = "move";
                }
              }}
              onDrop={(e) => {
                const key = e.dataTransfer.getData(DRAG_MIME);
                if (!key) return;
                e.preventDefault();
                const n = findCatalogNode(key);
                if (!n) return notify("error", `Unknown component ${key}.`);
                const p = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
                addComponent(key, n, { x: p.x - 20, y: p.y - 20 });
              }}
            >
              <ReactFlow
                nodes={nodes as unknown as Node[]}
                edges={styledEdges as unknown as Edge[]}
                nodeTypes={nodeTypes}
                onNodesChange={onNodesChange}
                onEdgesChange={onEdgesChange}
                onConnect={onConnect}
                nodesDraggable={!locked}
                nodesConnectable={!locked}
                edgesReconnectable={!locked}
                onConnectStart={onConnectStart}
                onConnectEnd={onConnectEnd}
                isValidConnection={isValidConnection}
                onNodeDragStart={() => pushHistory("drag", 0)}
                onNodeDragStop={() => changed()}
                defaultViewport={start.viewport ?? { x: 0, y: 0, zoom: 1 }}
                fitView={start.nodes.length > 0}
                fitViewOptions={{ maxZoom: 1, padding: 0.15 }}
                minZoom={0.05}
                maxZoom={2}
                colorMode={theme}
                deleteKeyCode={locked ? null : ["Delete", "Backspace"]}
                multiSelectionKeyCode={["Shift", "Meta", "Control"]}
                onlyRenderVisibleElements={nodes.length > 60}
                // while the view pans or zooms, the canvas is one composited layer that moves as a whole: no
                // repaint of every node and edge per frame (set on the element, not in React state: no render)
                onMoveStart={() => wrapper.current?.classList.add("canvas-moving")}
                onMoveEnd={() => wrapper.current?.classList.remove("canvas-moving")}
                proOptions={{ hideAttribution: true }}
                aria-label="Flow canvas"
              >
                <Background gap={20} size={1} />
                <Controls showInteractive={false} fitViewOptions={{ maxZoom: 1, padding: 0.15 }} />
                <MiniMap pannable zoomable nodeColor={(n) => ((n as Node).type === "noteNode" ? "#fde68a" : "#c7d2fe")} />
              </ReactFlow>
              {selectedComponents >= 2 && !locked && (
                <div className="selection-bar" role="toolbar" aria-label="Selection" data-testid="selection-bar">
                  <span>{selectedComponents} selected</span>
                  <button className="btn btn-small btn-primary" onClick={groupSelection} title="Group the selected components (Ctrl+G)">
                    Group
                  </button>
                </div>
              )}
              {nodes.length === 0 && (
                <div className="canvas-empty" aria-hidden>
                  Drag components from the left onto the canvas (or select one and press Enter).
                </div>
              )}
            </div>
            {showPlayground && (
              <Playground
                key={playgroundSeed.n}
                initialInput={playgroundSeed.text}
                flowId={flowId}
                manageFlowSessions={!readOnly}
                hasChatInput={hasChatInput}
                archive={archive}
                onRun={(input, s, files) => runBuild({ input, session: s, files })}
                onStop={() => void stopBuild()}
                onClose={() => setShowPlayground(false)}
                onDecide={async (requestId, actionId, values) => {
                  const jobId = pausedJobRef.current;
                  if (!jobId) return;
                  try {
                    const resumed = await api.resumeRun(jobId, requestId, actionId, values);
                    buildStore.set({ ...buildStore.state, pending: undefined });
                    notify("success", `Decision sent (${actionId}): the run goes on.`);
                    if (resumed.job_id) void followJob(resumed.job_id);
                  } catch (e) {
                    notifyError(e, "Could not send the decision");
                  }
                }}
              />
            )}
          </div>
        </div>
        {showSettings && (
          <FlowSettingsDialog
            flow={flow}
            readOnly={readOnly ? roleNotice(role) : undefined}
            onSaved={(updated) =>
              setFlow((f) => ({
                ...f,
                description: updated.description,
                endpoint_name: updated.endpoint_name,
                locked: updated.locked,
                folder_id: updated.folder_id,
                flow_type: updated.flow_type,
                a2a_enabled: updated.a2a_enabled,
                a2a_card_overrides: updated.a2a_card_overrides,
              }))
            }
            onClose={() => setShowSettings(false)}
          />
        )}
        {showAutomation && (
          <AutomationDialog
            flowId={flowId}
            onClose={() => setShowAutomation(false)}
            onOpenInPlayground={(text) => {
              setShowAutomation(false);
              setPlaygroundSeed((s) => ({ n: s.n + 1, text }));
              setShowPlayground(true);
            }}
          />
        )}
        {showShare && <ShareDialog flowId={flowId} onClose={() => setShowShare(false)} />}
        {showHistory && (
          <HistoryDialog
            flowId={flowId}
            versionToken={tokenRef.current}
            onPublication={(p: Publication) => setPublished(p.published && p.version ? p.version.version_tag : null)}
            onRestored={reloadFromServer}
            onClose={() => setShowHistory(false)}
          />
        )}
        {conflict && (
          <ConflictDialog
            flowId={flowId}
            conflict={conflict}
            base={baseRef.current}
            onMerged={reloadFromServer}
            onOverwritten={(updated) => {
              tokenRef.current = updated.version_token ?? null;
              baseRef.current = conflict.submitted;
              savedVersion.current = versionRef.current;
              setSaveState("saved");
              clearDraft(flowId);
              setConflict(null);
            }}
            onReload={reloadFromServer}
            onForked={(copyId) => leaveFor(`/flow/${copyId}`)}
            onClose={() => setConflict(null)}
          />
        )}
        {showKeys && <ShortcutSheet onClose={() => setShowKeys(false)} />}
        {showApi && (
          <ApiPanel
            flowId={flowId}
            flowName={flow.name}
            endpointName={flow.endpoint_name}
            tweaks={tweaks}
            hasWebhook={hasWebhook}
            published={published}
            onClose={() => setShowApi(false)}
          />
        )}
        {renaming && (
          <PromptDialog
            title="Rename flow"
            label="Name"
            initial={flow.name}
            onClose={() => setRenaming(false)}
            onSubmit={async (name) => {
              try {
                const updated = await api.updateFlow(flowId, { name });
                setFlow((f) => ({ ...f, name: updated.name }));
                setRenaming(false);
              } catch (e) {
                notifyError(e, "Could not rename the flow");
              }
            }}
          />
        )}
        {bigEditor && <BigEditor {...bigEditor} nodes={nodes} onClose={() => setBigEditor(null)} />}
        {nodeDialog && (() => {
          const n = nodes.find((x) => x.id === nodeDialog.nodeId);
          if (!n) return null;
          const close = () => setNodeDialog(null);
          if (nodeDialog.kind === "code") return <CodeView node={n} onClose={close} />;
          return (
            <ControlsDialog
              node={n}
              onClose={close}
              onSave={(advanced) => {
                const template = { ...n.data.node.template };
                for (const [k, adv] of Object.entries(advanced)) {
                  const f = template[k];
                  if (isTemplateField(f) && Boolean(f.advanced) !== adv) template[k] = { ...f, advanced: adv };
                }
                setNodeData(n.id, { node: { ...n.data.node, template } });
                close();
              }}
            />
          );
        })()}
        {keyOrigin && (
          <KeyConnectDialog
            origin={keyOrigin}
            nodes={nodes}
            edges={edges}
            onConnect={(c) => {
              endKeyConnect();
              onConnect(c);
              notify("success", "Connected.");
            }}
            onClose={endKeyConnect}
          />
        )}
        {actionsFor && (
          <ToolActionsDialog
            node={nodes.find((n) => n.id === actionsFor) ?? null}
            onSave={(rows) => {
              saveActions(actionsFor, rows);
              setActionsFor(null);
            }}
            onClose={() => setActionsFor(null)}
          />
        )}
      </DragContext.Provider>
      </ConnectedContext.Provider>
      </BuildContext.Provider>
    </EditorContext.Provider>
  );
}
