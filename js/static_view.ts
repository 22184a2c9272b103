// The view rules without a page: a second bundle (paddleviz_widget/static/view_rules.js, see
// build.mjs) that the kernel runs in embedded V8 (paddleviz_widget/export/view_rules.py) to
// write the DOT of the view the explorer draws first, for static SVG/PNG pictures and the
// saved-notebook fallback. No DOM, no d3, no WASM: JSON text in, text out.
//
//   pvwStatic.viewDot(payloadJson, optionsJson) -> DOT text (throws on bad input)
//   pvwStatic.view(payloadJson, optionsJson) -> JSON {dot, depth, expanded, visible, counts,
//     notes, notices} or {error, kind: "option" | "graph" | "failure"}
//   pvwStatic.svgProblem(svg) -> what in a Graphviz SVG is not a plain drawing, or null
//
// Options: {expanded?: string[], depth?: number, edits?: [...], fold?: boolean, view?:
// "backward"|"forward", rankdir?: "TB"|"LR", edgeLabels?: boolean, gradColour?: boolean,
// step?: number|null, static?: boolean}: the GraphWidget traits of those names (edits: its
// pending _request edits; rankdir, edgeLabels, gradColour, step: as in its _view_options, step
// a position in meta.steps.index); without them, the explorer's defaults. `static` writes
// colours as DOT attributes (static_palette.ts).
import { svgProblem } from "./render/svg_guard";
import { counts } from "./view/budget_text";
import { diffInfo, diffMarking } from "./view/diff";
import { DEFAULT_DOT_OPTIONS, visibleGraphToDot, type DotOptions } from "./view/dot";
import { firstView, startColouring } from "./view/first_view";
import { readingFor } from "./view/forward";
import { buildIndex, type GraphIndex } from "./view/graph_index";
import { readGraph } from "./view/payload";
import { noticeLines } from "./view/pylayers";
import { STATIC_PALETTE } from "./view/static_palette";

/** Something in the options that cannot be done; the message says what to pass instead. */
class OptionError extends Error {}

type Options = Record<string, unknown>;

function check(ok: boolean, message: string): void {
  if (!ok) throw new OptionError(message);
}

function readOptions(optionsJson: string): Options {
  const options: unknown = optionsJson ? JSON.parse(optionsJson) : {};
  check(options !== null && typeof options === "object" && !Array.isArray(options), "options must be a JSON object");
  const o = options as Options;
  const known = ["expanded", "depth", "edits", "fold", "view", "rankdir", "edgeLabels", "gradColour", "step", "static"];
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  check(unknown.length === 0, `unknown option(s) ${unknown.join(", ")}: known are ${known.join(", ")}`);
  return o;
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

function wantedGroups(
  index: GraphIndex,
  o: Options,
): { expanded?: string[]; depth?: number; edits?: unknown[]; fold: boolean } {
  check(o.expanded === undefined || o.depth === undefined, "give expanded or depth, not both");
  check(o.fold === undefined || typeof o.fold === "boolean", "fold must be true or false");
  const fold = o.fold !== false;
  if (o.expanded !== undefined && o.expanded !== null) {
    const ids = o.expanded;
    check(
      Array.isArray(ids) && ids.every((id) => typeof id === "string"),
      "expanded must be a list of layer-group ids",
    );
    const missing = (ids as string[]).filter((id) => !index.groups.has(id));
    const some = [...index.groups.keys()].slice(0, 8).join(", ") || "none: this graph has no layer groups";
    check(
      missing.length === 0,
      `no layer group ${missing.slice(0, 5).join(", ")} in this graph (its ids: ${some}${index.groups.size > 8 ? ", ..." : ""})`,
    );
    return { expanded: ids as string[], edits: Array.isArray(o.edits) ? o.edits : [], fold };
  }
  const depth = o.depth ?? -1;
  check(isInt(depth) && depth >= -1, "depth must be an integer >= 0 (or -1 / absent for the automatic depth)");
  return { depth: depth as number, edits: Array.isArray(o.edits) ? o.edits : [], fold };
}

function dotOptions(index: GraphIndex, o: Options): DotOptions {
  const rankdir = o.rankdir ?? DEFAULT_DOT_OPTIONS.rankdir;
  check(rankdir === "TB" || rankdir === "LR", 'rankdir must be "TB" or "LR"');
  const edgeLabels = o.edgeLabels ?? DEFAULT_DOT_OPTIONS.edgeLabels;
  check(typeof edgeLabels === "boolean", "edgeLabels must be true or false");
  check(o.gradColour === undefined || typeof o.gradColour === "boolean", "gradColour must be true or false");
  check(
    o.step === undefined || o.step === null || isInt(o.step),
    "step must be a position in meta.steps.index, or null for the last",
  );
  check(o.view === undefined || o.view === "backward" || o.view === "forward", 'view must be "backward" or "forward"');
  const grad = startColouring(index, {
    on: o.gradColour as boolean | undefined,
    step: o.step as number | null | undefined,
  });
  check(typeof grad !== "string", String(grad));
  return {
    rankdir: rankdir as DotOptions["rankdir"],
    edgeLabels: edgeLabels as boolean,
    grad: grad as Exclude<typeof grad, string>,
    reading: readingFor(index.graph, o.view ?? "backward"),
    diff: diffInfo(index.graph) ? diffMarking(index) : null, // a diff of two graphs is marked
    palette: o.static === true ? STATIC_PALETTE : null,
  };
}

function render(payloadJson: string, optionsJson: string): Record<string, unknown> {
  const o = readOptions(optionsJson);
  let doc: unknown;
  try {
    doc = JSON.parse(payloadJson);
  } catch (err) {
    return { error: `the graph is not JSON text (${(err as Error).message})`, kind: "graph" };
  }
  const read = readGraph(doc);
  if (read.error) return { error: read.error, kind: "graph" };
  const index = buildIndex(read.payload);
  const options = dotOptions(index, o);
  const shown = firstView(index, wantedGroups(index, o));
  return {
    dot: visibleGraphToDot(index, shown.vg, options),
    depth: shown.depth,
    expanded: shown.expanded,
    visible: shown.vg.nodes.map((n) => n.id),
    counts: counts(index, shown.vg),
    notes: shown.notes,
    notices: noticeLines(index.graph),
  };
}

export function view(payloadJson: string, optionsJson: string): string {
  try {
    return JSON.stringify(render(payloadJson, optionsJson));
  } catch (err) {
    const kind = err instanceof OptionError || err instanceof SyntaxError ? "option" : "failure";
    return JSON.stringify({ error: (err as Error).message || String(err), kind });
  }
}

export function viewDot(payloadJson: string, optionsJson: string): string {
  const result = JSON.parse(view(payloadJson, optionsJson)) as { dot?: string; error?: string };
  if (result.error !== undefined || result.dot === undefined) throw new Error(result.error ?? "no DOT");
  return result.dot;
}

(globalThis as unknown as { pvwStatic: unknown }).pvwStatic = { view, viewDot, svgProblem };
