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

export type NodeKind = "op" | "param" | "output" | "program_op";

/** trace(stats=True): the gradient one edge carried. norm (L2), max_abs and mean_abs are over
 * the finite elements; nan and inf count the others; zero_fraction is over all. */
export interface GradStats {
  norm: number;
  max_abs: number;
  mean_abs: number;
  zero_fraction: number;
  nan: number;
  inf: number;
}

/** Schema 2.2, a diff of graphs a and b (GraphWidget.diff): one way a matched node or edge
 * differs. `of`: where (param, tensor, inputs.<slot>, outputs.<slot>; absent: the gradient). */
export interface DiffChange {
  field: string;
  of?: string;
  a: unknown;
  b: unknown;
}

/** Only in b (added), only in a (removed), or in both but not the same (changed). */
export interface DiffMark {
  status: "added" | "removed" | "changed";
  changes: DiffChange[];
}

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
  /** A parameter whose gradient came out all zeros ("zero") or never came ("none"). */
  grad_status?: "zero" | "none" | null;
  diff?: DiffMark;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  index?: number;
  grad: GradInfo | null;
  /** Name of the backward output slot the gradient leaves its source by (e.g. "grad_x"). */
  slot?: string | null;
  stats?: GradStats | null;
  /** Why there are no statistics here (e.g. inside a compiled program). */
  no_stats?: string;
  diff?: DiffMark;
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
