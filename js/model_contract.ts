// The synced model, the one contract between the kernel (GraphWidget's traits tagged sync=True)
// and the page: every key the page reads or writes, its type, and who writes it. The request /
// answer protocol over `_request` and `_resolved` is described where it is answered, in
// ./kernel_sync.ts. tests/test_model_contract.py fails when MODEL_KEYS and the Python traits
// drift apart; js/model_contract.test.ts when the page names a key that is not here.
import type { RankDir } from "./view/dot";

/** Who writes a key: the kernel, the page, both (the user's clicks and Python's setters), or
 * only a saved page (export/standalone.py), where there is no kernel. */
export type Writer = "kernel" | "page" | "both" | "saved page";

/** A key's value as JSON (the Python trait: Dict, Unicode, List, Int, Bool), or a binary
 * buffer (Bytes). */
export type JsonType = "object" | "string" | "array" | "integer" | "boolean" | "bytes";

/** The model's keys. A saved page (export/standalone.py) sets only graph, height, selected,
 * expanded, depth, _request, _resolved and _layer_rows: the others are optional here. */
export type WidgetModel = {
  /** The graph document as build_graph writes it (schema 2.3; 1.0 to 2.2 are read too): one
   * buffer of its JSON text (from GraphWidget or a saved page), read by ./kernel_sync.ts
   * loadGraph. */
  graph: unknown;
  /** CSS height of the explorer. */
  height: string;
  /** Id of the selected node, edge or layer group ("" for none). */
  selected: string;
  /** Ids of the open layer groups. */
  expanded: string[];
  /** Depth the groups were last opened to (-1: automatic, -2: transient, see answerKernel). */
  depth: number;
  /** Fold runs of repeated blocks (absent: true). */
  fold?: boolean;
  /** How the graph is read: "backward" or "forward" (absent: backward). */
  view?: string;
  /** The kernel's view request {id, depth, edits}, {} before the first: read through
   * view/expansion.ts readRequest, answered in ./kernel_sync.ts. */
  _request: unknown;
  /** [request id, edits applied]: how far the page got ([] before its first answer). */
  _resolved: [number, number] | [];
  /** How the page draws the view (./view_options.ts writes it), {} until a view is drawn. */
  _view_options?: ViewOptions | Record<string, never>;
  /** A saved page's Layers table (export/standalone.py): no kernel to ask there. */
  _layer_rows?: unknown;
};

/** `_view_options`: what Python needs to save a picture of the view the user sees. */
export interface ViewOptions {
  rankdir: RankDir;
  edgeLabels: boolean;
  /** "Colour by |grad|" is on (false too when the graph has no statistics). */
  gradColour: boolean;
  /** The step slider: a position in meta.steps.index (null when the graph keeps no steps). */
  step: number | null;
}

export interface KeySpec {
  type: JsonType;
  writer: Writer;
}

/** Every key of WidgetModel, once (the compiler checks that none is missing or extra). */
export const MODEL_KEYS = {
  graph: { type: "object", writer: "kernel" },
  height: { type: "string", writer: "kernel" },
  selected: { type: "string", writer: "both" },
  expanded: { type: "array", writer: "both" },
  depth: { type: "integer", writer: "both" },
  fold: { type: "boolean", writer: "kernel" },
  view: { type: "string", writer: "both" },
  _request: { type: "object", writer: "kernel" },
  _resolved: { type: "array", writer: "page" },
  _view_options: { type: "object", writer: "page" },
  _layer_rows: { type: "object", writer: "saved page" },
} as const satisfies { readonly [K in keyof Required<WidgetModel>]: KeySpec };
