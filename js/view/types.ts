// The JSON payload built by the Python tracer (paddleviz_widget/schema/graph.schema.json).

export type Shape = number[] | null;

export interface GradInfo {
  dtype: string | null;
  shape: Shape;
  place: string | null;
}

export interface SlotInfo extends GradInfo {
  name: string;
  tensor: string | null;
}

export type NodeKind = "op" | "param" | "output";

export interface GraphNode {
  id: string;
  name: string;
  ptr: string;
  kind: NodeKind;
  group?: string | null;
  param?: { name: string; shape: Shape; dtype: string | null } | null;
  call_site?: { file: string; line: number; function: string | null } | null;
  inputs?: SlotInfo[];
  outputs?: SlotInfo[];
  tensor?: GradInfo | null;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  index?: number;
  grad: GradInfo | null;
  /** Name of the backward output slot the gradient leaves its source by (e.g. "grad_x"). */
  slot?: string | null;
}

export interface GraphGroup {
  id: string;
  name: string;
  type: string;
  parent: string | null;
}

export interface GraphPayload {
  schema_version: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  groups: GraphGroup[];
  meta?: Record<string, unknown>;
}
