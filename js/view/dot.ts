// Visible graph -> DOT text. Pure: no DOM, no Graphviz; unit-tested with vitest.
// Every node, edge and cluster gets an `id` attribute "pvw-<graph id>" so d3-graphviz (keyMode
// "id") can match elements across redraws and animate expand/collapse.
import { visibleText } from "./visible_text";
import { groupStats, type GraphIndex } from "./graph_index";
import { countsText, formatGrad, formatShape, gradSummary, groupTitle } from "./format";
import { gradBadge, type GradColouring } from "./grad_view";
import { rampClass } from "./grad_stats";
import { opTitle, shownEnds, type Reading } from "./forward";
import type { DotPalette } from "./static_palette";
import type { DiffMarking } from "./diff";
import { runLines } from "./describe_run";
import { problemBadges } from "./problems";
import type { VisibleEdge, VisibleGraph, VisibleNode } from "./visible";

export type RankDir = "TB" | "LR";

export interface DotOptions {
  rankdir: RankDir;
  edgeLabels: boolean;
  /** Colour edges by their gradient's norm (trace(stats=True)); absent: plain. */
  grad?: GradColouring | null;
  /** Read the graph forward (forward.ts): forward op names, arrows from inputs to outputs;
   * absent: backward, as recorded. */
  reading?: Reading;
  /** Colours as DOT attributes, for a picture drawn without widget.css (static_palette.ts);
   * absent: classes only, which the page's CSS colours. */
  palette?: DotPalette | null;
  /** A diff of two graphs (view/diff.ts): classes for its marks, counts on collapsed layers. */
  diff?: DiffMarking | null;
}

export const DEFAULT_DOT_OPTIONS: DotOptions = { rankdir: "TB", edgeLabels: false };

export const ID_PREFIX = "pvw-";
export const CLUSTER_SUFFIX = "-cluster";

/** SVG element id of a node, collapsed group or edge. */
export function elementId(id: string): string {
  return `${ID_PREFIX}${id}`;
}

/** SVG element id of an expanded group's cluster (distinct from its collapsed node). */
export function clusterElementId(groupId: string): string {
  return `${ID_PREFIX}${groupId}${CLUSTER_SUFFIX}`;
}

/** Quote a string for DOT, escaping what would end or break the quoted id. */
export function dotString(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

// Label text comes from user code (layer, class and parameter names). XML 1.0 has no place for
// most C0 controls or unpaired surrogates: Graphviz would copy them into the SVG raw, which an
// XML parser (d3-graphviz's) rejects, so they are shown as U+FFFD.
const NOT_XML =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching those controls is the point
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function printable(text: string): string {
  return visibleText(text.replace(/\r\n?/g, "\n")).replace(NOT_XML, "\ufffd");
}

/**
 * A quoted DOT label that Graphviz shows exactly as `text`: backslashes are doubled (so \N, \G,
 * \l, ... stay text), and `&`, which Graphviz would read as the start of an entity (`&lt;`
 * shows as "<"), is written as `&amp;`. Newlines stay line breaks.
 */
export function dotText(text: string): string {
  return dotString(printable(text).replace(/&/g, "&amp;"));
}

/** " · part 2/3" for a group drawn in several pieces (a layer used more than once, or a
 * container whose members are not directly connected), else "". */
export function callText(call: number, calls: number): string {
  return calls > 1 ? ` \u00b7 part ${call + 1}/${calls}` : "";
}

/** A node's label as lines: title (a name may hold newlines of its own), then details. */
export function nodeLines(index: GraphIndex, vn: VisibleNode, reading: Reading = "backward"): string[] {
  if (vn.run) return runLines(index, vn.run);
  if (vn.group) {
    const stats = groupStats(index, vn.group.id, vn.call);
    const flagged = problemBadges(index.graph).get(vn.group.id);
    return [
      groupTitle(vn.group),
      `${countsText(stats.ops, stats.params)}${callText(vn.call, vn.calls)}`,
      ...(flagged ? [flagged] : []),
    ];
  }
  const node = vn.node;
  if (!node) return [vn.id];
  if (node.kind === "param") {
    const shape = node.param?.shape ?? index.inEdges.get(node.id)?.[0]?.grad?.shape;
    const title = node.param?.name ?? "leaf";
    const badge = gradBadge(node);
    return [title, ...(shape ? [formatShape(shape)] : []), ...(badge ? [badge] : [])];
  }
  const title = opTitle(node.name, reading);
  const flagged = problemBadges(index.graph).get(node.id);
  return [title, ...(node.tensor ? [formatGrad(node.tensor)] : []), ...(flagged ? [flagged] : [])];
}

export function nodeLabel(index: GraphIndex, vn: VisibleNode, reading: Reading = "backward"): string {
  return nodeLines(index, vn, reading).join("\n");
}

/**
 * Text for a Graphviz HTML-like label, shown as is: markup characters as entities, backslashes
 * doubled (Graphviz expands \N, \G, ... in HTML-like labels too, after decoding entities, so
 * `&#92;` would not do), newlines as <BR/>.
 */
export function htmlText(text: string): string {
  return printable(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/\\/g, "\\\\")
    .replace(/\n/g, "<BR/>");
}

/** DOT label attribute value: HTML-like for collapsed groups (bold title), quoted otherwise. */
export function dotLabel(index: GraphIndex, vn: VisibleNode, reading: Reading = "backward"): string {
  const [title, ...rest] = nodeLines(index, vn, reading);
  if (!vn.group && !vn.run) return dotText([title, ...rest].join("\n"));
  return `<<B>${htmlText(title)}</B>${rest.map((line) => `<BR/>${htmlText(line)}`).join("")}>`;
}

export function clusterLabel(title: string): string {
  return `\u25be ${title}`;
}

export function edgeLabel(ve: VisibleEdge, reading: Reading = "backward"): string {
  const texts = gradSummary(ve.edges.map((e) => e.grad));
  if (texts.length === 1 && texts[0] === "?") return "";
  return texts.length <= 2 ? texts.join("\n") : `${ve.edges.length} ${reading === "forward" ? "tensors" : "grads"}`;
}

const NODE_STYLE: Record<VisibleNode["kind"], string> = {
  op: 'shape=box style="rounded,filled"',
  param: "shape=ellipse style=filled",
  output: 'shape=box style="rounded,filled,bold"',
  group: 'shape=box style=filled peripheries=2 margin="0.14,0.06"',
};
/** A folded run of repeated blocks: a collapsed group drawn as a stack. */
const RUN_STYLE = 'shape=box3d style=filled margin="0.14,0.06"';

function attrs(list: Array<[string, string]>): string {
  return list.map(([k, v]) => `${k}=${v}`).join(" ");
}

/** Extra classes: a parameter with a badge, a collapsed group holding a NaN/Inf (widget.css). */
function nodeClass(index: GraphIndex, vn: VisibleNode, grad: GradColouring | null | undefined): string {
  if (vn.node && gradBadge(vn.node)) return "pvw-param pvw-badge";
  const run = vn.run ? " pvw-run" : ""; // a folded run of repeated blocks
  // A culprit problems() names (meta.problems): its node, or its layer drawn collapsed.
  const flagged = !vn.run && problemBadges(index.graph).has(vn.node?.id ?? vn.group?.id ?? "") ? " pvw-problem" : "";
  if (grad?.groupNonFinite(vn)) return `pvw-group${run} pvw-nonfinite${flagged}`;
  return `pvw-${vn.kind}${run}${flagged}`;
}

function nodeLine(
  index: GraphIndex,
  vn: VisibleNode,
  indent: string,
  grad?: GradColouring | null,
  palette?: DotPalette | null,
  reading?: Reading,
  diff?: DiffMarking | null,
): string {
  const mark = diff?.nodeClass(vn);
  const cls = mark ? `${nodeClass(index, vn, grad)} ${mark}` : nodeClass(index, vn, grad);
  const label = dotLabel(index, vn, reading);
  const line = diff?.groupLine(vn); // a collapsed layer's label is HTML-like: <...>
  const a = attrs([
    ["id", dotString(elementId(vn.id))],
    ["class", dotString(cls)],
    ["label", line ? `${label.slice(0, -1)}<BR/>${htmlText(line)}>` : label],
    ...(palette?.nodeColours(cls) ?? []),
  ]);
  return `${indent}${dotString(vn.id)} [${a} ${vn.run ? RUN_STYLE : NODE_STYLE[vn.kind]}];`;
}

/** " pvw-ramp-a" ... " pvw-ramp-f" for a colour of the |grad| ramp (widget.css redraws it on a
 * dark theme); see rampClass. */
function rampClassOf(colour: string): string {
  const name = rampClass(colour);
  return name ? ` ${name}` : "";
}

function edgeLine(vg: VisibleGraph, ve: VisibleEdge, options: DotOptions): string {
  const list: Array<[string, string]> = [["id", dotString(elementId(ve.id))]];
  const colour = options.grad?.edgeColour(ve) ?? null;
  // A coloured edge keeps Graphviz's stroke (widget.css greys only the others).
  const mark = options.diff?.edgeClass(ve);
  list.push([
    "class",
    dotString(
      `${ve.edges.length > 1 ? "pvw-merged" : "pvw-single"}${colour ? ` pvw-graded${rampClassOf(colour)}` : ""}${mark ? ` ${mark}` : ""}`,
    ),
  ]);
  if (colour) list.push(["color", dotString(colour)], ["penwidth", ve.edges.length > 1 ? "2.6" : "2"]);
  else if (ve.edges.length > 1) list.push(["penwidth", "1.6"]);
  // A parameter may sit beside the op that uses it (same rank) instead of one rank below:
  // hanging below, it pushes its layer's cluster into the next layer's ranks, and clusters
  // that share ranks go side by side (ResNets came out as a wide staircase).
  if (vg.nodeById.get(ve.target)?.kind === "param") list.push(["minlen", "0"]);
  // The gradients entering and leaving a folded run are labelled anyway: its in/out shapes.
  const run = vg.nodeById.get(ve.source)?.run || vg.nodeById.get(ve.target)?.run;
  const label = options.edgeLabels || run ? edgeLabel(ve, options.reading) : "";
  if (label) list.push(["label", dotText(label)]);
  if (mark && options.palette) list.push(...options.palette.edgeColours(mark)); // wins, as in widget.css
  const { from, to } = shownEnds(ve, options.reading); // forward: the tensor's producer first
  return `  ${dotString(from)} -> ${dotString(to)} [${attrs(list)}];`;
}

function emitClusters(
  index: GraphIndex,
  vg: VisibleGraph,
  parent: string | null,
  indent: string,
  out: string[],
  grad?: GradColouring | null,
  palette?: DotPalette | null,
  reading?: Reading,
  diff?: DiffMarking | null,
): void {
  for (const vn of vg.nodes) {
    if (vn.cluster === parent) out.push(nodeLine(index, vn, indent, grad, palette, reading, diff));
  }
  for (const cluster of vg.clusters) {
    if (cluster.parent !== parent) continue;
    out.push(`${indent}subgraph ${dotString(`cluster_${cluster.id}`)} {`);
    const a = attrs([
      ["id", dotString(clusterElementId(cluster.id))],
      ["class", dotString("pvw-cluster")],
      ["label", dotText(clusterLabel(groupTitle(cluster.group) + callText(cluster.call, cluster.calls)))],
      ...(palette?.cluster ?? []),
    ]);
    out.push(`${indent}  graph [${a}];`);
    emitClusters(index, vg, cluster.id, `${indent}  `, out, grad, palette, reading, diff);
    out.push(`${indent}}`);
  }
}

/** From this many visible nodes on, Graphviz is tuned for speed (see sizeTuning). */
export const TUNE_FROM = 1000;

/**
 * Graph attributes for big graphs. Measured (benchmarks, Graphviz WASM, 1000-2000 nodes of the
 * Llama graphs): one network-simplex pass for ranking and x-coordinates (nslimit1, nslimit)
 * lays out 15-25% faster, and flat graphs come out up to 4x narrower. mclimit, searchsize and
 * remincross gained nothing measurable; splines=line/false gained only 4-8% and draw edges
 * through nodes, so edges stay splines.
 */
export function sizeTuning(visibleNodes: number): string {
  return visibleNodes >= TUNE_FROM ? " nslimit=1 nslimit1=1" : "";
}

// fontname must be a single name Graphviz has metrics for: with a list ("Helvetica,Arial")
// it falls back to narrower Times widths and labels overflow their boxes. The browser draws
// the text in a Helvetica-metric font (widget.css).
export function visibleGraphToDot(
  index: GraphIndex,
  vg: VisibleGraph,
  options: DotOptions = DEFAULT_DOT_OPTIONS,
): string {
  const out = [
    `digraph ${options.reading ?? "backward"} {`,
    `  graph [rankdir=${options.rankdir} nodesep=0.25 ranksep=0.3 bgcolor=transparent` +
      ` fontname="Helvetica" fontsize=11 labeljust=l style=rounded${sizeTuning(vg.nodes.length)}];`,
    '  node [fontname="Helvetica" fontsize=12 margin="0.1,0.04" height=0.3];',
    '  edge [fontname="Helvetica" fontsize=9 arrowsize=0.6];',
  ];
  const palette = options.palette;
  if (palette) {
    out.push(
      `  graph [${attrs(palette.graph)}];`,
      `  node [${attrs(palette.node)}];`,
      `  edge [${attrs(palette.edge)}];`,
    );
  }
  emitClusters(index, vg, null, "  ", out, options.grad, palette, options.reading, options.diff);
  for (const ve of vg.edges) out.push(edgeLine(vg, ve, options));
  out.push("}");
  return out.join("\n");
}
