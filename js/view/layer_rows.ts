// The Layers tab's rows as the kernel sends them (paddleviz_widget/export/layer_rows.py, made by
// graph/summary.py, the one implementation of the per-layer rule), checked field by field:
// nothing here computes a row. Pure.

/** The message type both ways (paddleviz_widget/export/layer_rows.py LAYER_ROWS). */
export const LAYER_ROWS = "pvw-layer-rows";

export interface LayerRow {
  group: string;
  name: string;
  type: string;
  depth: number;
  params: number;
  trainable: number;
  grad_nodes: number;
  grads_in: string[];
  grads_out: string[];
}

export interface LayerTable {
  rows: LayerRow[];
  total: number;
  trainable: number;
  /** Whose table it is, when that is not plain: a diff's is its second graph's. */
  note: string | null;
  /** What the counts leave out, as the footer's words after the totals ("" none). */
  counting: string;
}

/** A kernel from before `counting` counted the graph's parameter nodes alone. */
export const GRAPH_COUNTS = ", counting the parameters in this graph";

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

function readRow(raw: unknown): LayerRow | null {
  const r = raw as Partial<LayerRow> | null;
  if (!r || typeof r.group !== "string" || typeof r.name !== "string" || typeof r.type !== "string") return null;
  if (!isNum(r.depth) || !isNum(r.params) || !isNum(r.trainable) || !isNum(r.grad_nodes)) return null;
  if (!isStrings(r.grads_in) || !isStrings(r.grads_out)) return null;
  return r as LayerRow;
}

/** The table in a kernel message (or `_layer_rows`); a string says why there is none. */
export function readTable(msg: unknown): LayerTable | string {
  const m = msg as {
    rows?: unknown;
    total_params?: unknown;
    trainable_params?: unknown;
    error?: unknown;
    note?: unknown;
    counting?: unknown;
  };
  if (typeof m?.error === "string") return `No layer table: ${m.error}`;
  const rows = Array.isArray(m?.rows) ? m.rows.map(readRow) : null;
  if (!rows || rows.some((r) => r === null) || !isNum(m.total_params) || !isNum(m.trainable_params)) {
    return "No layer table: the kernel's answer could not be read.";
  }
  const note = typeof m.note === "string" && m.note ? m.note : null;
  const counting = typeof m.counting === "string" ? m.counting : GRAPH_COUNTS;
  return { rows: rows as LayerRow[], total: m.total_params, trainable: m.trainable_params, note, counting };
}
