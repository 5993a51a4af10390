// Shapes of the reference flow format (reference-api.md section 2) and the component catalog.

export interface TemplateField {
  name?: string;
  display_name?: string;
  type: string;
  _input_type?: string;
  value?: unknown;
  show?: boolean;
  advanced?: boolean;
  required?: boolean;
  options?: unknown[];
  input_types?: string[] | null;
  password?: boolean;
  load_from_db?: boolean;
  multiline?: boolean;
  list?: boolean;
  info?: string;
  placeholder?: string;
  real_time_refresh?: boolean;
  range_spec?: { min?: number; max?: number; step?: number };
  limit?: number;
  [key: string]: unknown;
}

export interface NodeOutput {
  name: string;
  display_name?: string;
  types: string[];
  selected?: string | null;
  method?: string;
  hidden?: boolean | null;
  group_outputs?: boolean;
  allows_loop?: boolean;
  [key: string]: unknown;
}

export interface FrontendNode {
  template: Record<string, TemplateField | string> & { _type?: string };
  outputs?: NodeOutput[];
  display_name?: string;
  description?: string;
  icon?: string;
  base_classes?: string[];
  field_order?: string[];
  documentation?: string;
  [key: string]: unknown;
}

export interface GenericNodeData {
  id: string;
  type: string;
  node: FrontendNode;
  showNode?: boolean;
  selected_output?: string;
  display_name?: string;
  description?: string;
  [key: string]: unknown;
}

export interface FlowNode {
  id: string;
  type: string; // "genericNode" | "noteNode"
  position: { x: number; y: number };
  data: GenericNodeData;
  width?: number;
  height?: number;
  measured?: { width?: number; height?: number };
  selected?: boolean;
  dragging?: boolean;
  [key: string]: unknown;
}

export interface SourceHandle {
  dataType: string;
  id: string;
  name: string;
  output_types: string[];
}

export interface TargetHandle {
  fieldName: string;
  id: string;
  inputTypes: string[] | null;
  type: string;
  /** on a group's field: the inner component and field it stands for */
  proxy?: { id: string; field: string };
}

export interface FlowEdge {
  id: string;
  source: string;
  target: string;
  sourceHandle: string;
  targetHandle: string;
  data: { sourceHandle: SourceHandle; targetHandle: TargetHandle; [key: string]: unknown };
  selected?: boolean;
  animated?: boolean;
  className?: string;
  [key: string]: unknown;
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

export interface FlowData {
  nodes: FlowNode[];
  edges: FlowEdge[];
  viewport?: Viewport;
}

/** `GET /api/v1/all`: `{category: {key: frontend node}}` (plus non-category members such as `component_display_names`). */
export type Catalog = Record<string, Record<string, FrontendNode>>;

export interface FlowRecord {
  id: string;
  name: string;
  description?: string | null;
  data?: FlowData | null;
  folder_id?: string | null;
  endpoint_name?: string | null;
  updated_at?: string | null;
  user_id?: string | null;
  webhook?: boolean;
  access_type?: string;
  is_component?: boolean;
  version_token?: string | null;
  [key: string]: unknown;
}

export interface Project {
  id: string;
  name: string;
  description?: string | null;
  parent_id?: string | null;
  [key: string]: unknown;
}
