// A diff of two graphs (schema 2.2, GraphWidget.diff) as the view shows it: which visible
// nodes and edges are marked added / removed / changed, what a collapsed layer holds of them,
// the words for a change, and the inspector's sections and overview. Pure: plain data out.
import type { InfoItem, InfoSection, Inspection } from "./inspection";
import { formatShape, groupTitle, plural, shortOpName } from "./format";
import type { GraphIndex } from "./graph_index";
import { parseInstanceId } from "./graph_index";
import type { DiffChange, DiffMark, GraphEdge, GraphGroup, GraphNode, GraphPayload } from "./types";
import type { VisibleEdge, VisibleNode } from "./visible";

export type DiffStatus = DiffMark["status"];
export const DIFF_STATUSES: readonly DiffStatus[] = ["added", "removed", "changed"];

/** meta.diff: the two graphs' labels, the tolerance on gradient statistics, what was compared. */
export interface DiffInfo {
  labels: [string, string];
  rtol: number;
  compared: string[];
  /** [a's path, b's path] of each layer matched at another position in its container (a
   * layer inserted before it in an nn.Sequential): graph/diff_align.py. */
  moved: [string, string][];
}

export type Tally = Record<DiffStatus, number>;

/** The graph's meta.diff, or null when it is not a diff. */
export function diffInfo(graph: GraphPayload): DiffInfo | null {
  const raw = graph.meta?.diff as { labels?: unknown; rtol?: unknown; compared?: unknown; moved?: unknown } | undefined;
  if (!raw || typeof raw !== "object") return null;
  const labels = Array.isArray(raw.labels) && raw.labels.length === 2 ? raw.labels.map(String) : ["a", "b"];
  return {
    labels: [labels[0], labels[1]],
    rtol: typeof raw.rtol === "number" ? raw.rtol : NaN,
    compared: Array.isArray(raw.compared) ? raw.compared.map(String) : [],
    moved: (Array.isArray(raw.moved) ? raw.moved : [])
      .filter((m): m is [string, string] => Array.isArray(m) && m.length === 2 && m.every((x) => typeof x === "string"))
      .map(([a, b]) => [a, b]),
  };
}

export const emptyTally = (): Tally => ({ added: 0, removed: 0, changed: 0 });

/** How many nodes and edges of the graph carry each mark (read from the marks themselves). */
export function graphTally(graph: GraphPayload): { nodes: Tally; edges: Tally } {
  const nodes = emptyTally();
  const edges = emptyTally();
  for (const n of graph.nodes) if (n.diff) nodes[n.diff.status] += 1;
  for (const e of graph.edges) if (e.diff) edges[e.diff.status] += 1;
  return { nodes, edges };
}

/** "+2 −1 ~3": the non-zero counts, or "" when there are none. */
export function tallyText(t: Tally): string {
  const parts: string[] = [];
  if (t.added) parts.push(`+${t.added}`);
  if (t.removed) parts.push(`\u2212${t.removed}`);
  if (t.changed) parts.push(`~${t.changed}`);
  return parts.join(" ");
}

/** Several gradients drawn as one edge: one mark if they all share it, else changed. */
export function mergedStatus(edges: readonly GraphEdge[]): DiffStatus | null {
  const marks = edges.map((e) => e.diff?.status ?? null);
  if (marks.every((m) => m === null)) return null;
  return marks.every((m) => m === marks[0]) ? marks[0] : "changed";
}

/** What the DOT writer asks about a diff (view/dot.ts). */
export interface DiffMarking {
  /** Extra classes of a visible node: its mark; a collapsed layer holding marks, the one
   * they share (else changed) and pvw-diff-holds. */
  nodeClass(vn: VisibleNode): string | null;
  edgeClass(ve: VisibleEdge): string | null;
  /** A collapsed layer's extra label line ("Δ +2 ~3"), null when it holds no differences. */
  groupLine(vn: VisibleNode): string | null;
}

/** What a collapsed layer or folded run holds: the marks on its nodes and on the edges they
 * send, and `whole`, added or removed when every node of it is (the layer is only in one
 * graph), else null. */
interface Holding {
  tally: Tally;
  whole: DiffStatus | null;
}

function holding(index: GraphIndex, nodes: Iterable<string>): Holding {
  const tally = emptyTally();
  let whole: DiffStatus | null | undefined; // undefined: no node seen yet
  for (const n of nodes) {
    const mark = index.nodes.get(n)?.diff;
    if (mark) tally[mark.status] += 1;
    const status = mark && mark.status !== "changed" ? mark.status : null;
    whole = whole === undefined || whole === status ? status : null;
    for (const e of index.outEdges.get(n) ?? []) if (e.diff) tally[e.diff.status] += 1;
  }
  return { tally, whole: whole ?? null };
}

/** Marks on nodes inside a group call and on the edges they send. */
export function groupTally(index: GraphIndex, group: string, call: number): Tally {
  return holding(index, index.calls(group)[call] ?? []).tally;
}

export function diffMarking(index: GraphIndex): DiffMarking {
  const held = new Map<string, Holding>(); // per group instance: a graph's marks never change
  const holdingOf = (vn: VisibleNode): Holding | null => {
    // A folded run stands for every node of its blocks: it holds their marks as a layer does.
    if (!vn.group && !vn.run) return null;
    let h = held.get(vn.id);
    if (!h) {
      const nodes = vn.run
        ? vn.run.members.flatMap((m) => index.descendantNodes(m))
        : (index.calls((vn.group as GraphGroup).id)[vn.call] ?? []);
      h = holding(index, nodes);
      held.set(vn.id, h);
    }
    return h;
  };
  return {
    nodeClass(vn) {
      if (vn.node) return vn.node.diff ? `pvw-diff-${vn.node.diff.status}` : null;
      const h = holdingOf(vn);
      if (!h || !tallyText(h.tally)) return null;
      // Drawn added or removed only when it is wholly: a layer both graphs have that holds an
      // added block is changed (green said the whole layer was new).
      return `pvw-diff-holds pvw-diff-${h.whole ?? "changed"}`;
    },
    edgeClass(ve) {
      const status = mergedStatus(ve.edges);
      return status ? `pvw-diff-${status}` : null;
    },
    groupLine(vn) {
      const h = holdingOf(vn);
      const text = h ? tallyText(h.tally) : "";
      return text ? `\u0394 ${text}` : null;
    },
  };
}

function value(v: unknown, field: string, digits = 3): string {
  if (v === null || v === undefined) return field === "grad_status" ? "normal" : "?";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(digits)));
  if (Array.isArray(v)) return field === "slots" ? v.join(", ") : formatShape(v as number[]);
  return String(v);
}

const FIELD_TEXT: Record<string, string> = {
  max_abs: "max |g|",
  norm: "\u2016g\u2016",
  grad_status: "gradient",
  nan: "NaN count",
  inf: "Inf count",
};

/** Where and what: "shape", "param dtype", "output grad_x shape", "input slots". */
export function changeLabel(c: DiffChange): string {
  const field = FIELD_TEXT[c.field] ?? c.field;
  if (!c.of) return field;
  const [side, slot] = c.of.split(".", 2);
  const where = side === "inputs" ? "input" : side === "outputs" ? "output" : side;
  return slot ? `${where} ${slot} ${field}` : `${where} ${field}`;
}

/** "[2, 16] → [2, 32]": the value in a, then in b. */
export function changeValue(c: DiffChange): string {
  // Two numbers that differ never read the same: a small rtol flags 1.23451 → 1.23469.
  let digits = 3;
  while (digits < 17 && c.a !== c.b && value(c.a, c.field, digits) === value(c.b, c.field, digits)) digits += 1;
  return `${value(c.a, c.field, digits)} \u2192 ${value(c.b, c.field, digits)}`;
}

/** The changes in the order they are read: a NaN/Inf count first. A gradient that went
 * NaN has a norm and max |g| of its finite values, often 0: "‖g‖ 8.79 → 0" first read as a
 * gradient that vanished, its NaN count hidden in "(+3)". */
export function shownChanges(mark: DiffMark): DiffChange[] {
  const first = (c: DiffChange): number => (c.field === "nan" || c.field === "inf" ? 0 : 1);
  return [...mark.changes].sort((x, y) => first(x) - first(y)); // stable: the rest in order
}

function statusText(mark: DiffMark, info: DiffInfo): string {
  const [a, b] = info.labels;
  if (mark.status === "added") return `only in ${b} (added)`;
  if (mark.status === "removed") return `only in ${a} (removed)`;
  return `changed from ${a} to ${b}`;
}

function markItems(mark: DiffMark, info: DiffInfo): InfoItem[] {
  const [a, b] = info.labels;
  return [
    { label: "status", value: statusText(mark, info) },
    ...shownChanges(mark).map((c) => ({
      label: "change",
      value: `${changeLabel(c)}: ${changeValue(c)}`,
      hint: `${a} \u2192 ${b}`,
    })),
    { label: "shown", value: `${mark.status === "removed" ? a : b}'s values` },
  ];
}

function layerName(index: GraphIndex, node: GraphNode | undefined): string | null {
  const group = node?.group ? index.groups.get(node.group) : undefined;
  return group ? group.name || group.type : null;
}

function nodeName(node: GraphNode): string {
  return node.kind === "param" ? (node.param?.name ?? "leaf") : shortOpName(node.name);
}

/** One line per marked node or edge, for lists: "fc1 · Matmul" / "fc1 · Matmul → Add"; an
 * edge into another layer's op names that layer too ("layers.3 · Add → layers.2 · Add"):
 * a block's two residual Adds, one sending to the block before, read alike without it. */
export function entryTitle(index: GraphIndex, id: string): string {
  const node = index.nodes.get(id);
  const edge = node ? undefined : index.edges.get(id);
  const source = node ?? (edge ? index.nodes.get(edge.source) : undefined);
  if (!source) return id;
  const layer = layerName(index, source);
  const target = edge ? index.nodes.get(edge.target) : undefined;
  let name = nodeName(source);
  if (target) {
    // (a parameter's name is its full path already)
    const where = target.kind === "param" || target.group === source.group ? null : layerName(index, target);
    name += ` \u2192 ${where ? `${where} \u00b7 ` : ""}${nodeName(target)}`;
  }
  return layer ? `${layer} \u00b7 ${name}` : name;
}

/** The entry's title, and for a change its first one: "fc1 · Matmul: output grad_x shape
 * [2, 16] → [2, 32] (+2)". */
function entryText(index: GraphIndex, id: string, mark: DiffMark): string {
  const first = shownChanges(mark)[0];
  if (!first) return entryTitle(index, id);
  const more = mark.changes.length > 1 ? ` (+${mark.changes.length - 1})` : "";
  return `${entryTitle(index, id)}: ${changeLabel(first)} ${changeValue(first)}${more}`;
}

/** Entries listed per status. Every difference is listed up to it (it used to be 8: a user
 * with 40 changed layers could not reach the rest); past it, ‹ › and n / p step through them
 * all, and the inspector stays quick to draw on a big graph's thousands of changed edges. */
export const LIST_LIMIT = 500;

/** The marked nodes and edges among `nodes` / `edges`, as clickable items, per status. */
function listSections(
  index: GraphIndex,
  nodes: Iterable<GraphNode>,
  edges: Iterable<GraphEdge>,
  limit: number,
): InfoSection[] {
  const items: Record<DiffStatus, InfoItem[]> = { added: [], removed: [], changed: [] };
  const counts = emptyTally();
  for (const x of [...nodes, ...edges]) {
    if (!x.diff) continue;
    counts[x.diff.status] += 1;
    const list = items[x.diff.status];
    const kind = index.nodes.has(x.id) ? "node" : "edge";
    if (list.length < limit) list.push({ label: kind, value: entryText(index, x.id, x.diff), ref: x.id });
  }
  return DIFF_STATUSES.filter((s) => counts[s] > 0).map((s) => {
    const more = counts[s] - items[s].length;
    const rest = more > 0 ? [{ label: "\u2026", value: `${more} more: \u203a or n steps through every one` }] : [];
    return { title: `${s[0].toUpperCase()}${s.slice(1)} (${counts[s]})`, items: [...items[s], ...rest] };
  });
}

function comparedText(info: DiffInfo): string {
  const stats = info.compared.includes("stats");
  const tol = Number.isFinite(info.rtol)
    ? ` (\u2016g\u2016, max |g| beyond ${+(info.rtol * 100).toPrecision(3)}%)`
    : "";
  return `dtype, shape, slot${stats ? `, gradient statistics${tol}` : ""}`;
}

/** The layers matched under another name: a layer inserted before them shifted it. */
function movedSection(info: DiffInfo): InfoSection[] {
  if (info.moved.length === 0) return [];
  const [a, b] = info.labels;
  const items = info.moved.slice(0, LIST_LIMIT).map(([from, to]) => ({
    label: "layer",
    value: `${from} \u2192 ${to}`,
    hint: `${a}'s ${from} is ${b}'s ${to}: a layer inserted or taken out before it shifted its name`,
  }));
  const more = info.moved.length - items.length;
  if (more > 0) items.push({ label: "\u2026", value: `${more} more`, hint: "" });
  return [{ title: `Moved (${info.moved.length}), matched by structure`, items }];
}

/** The path a layer of b (``path``) has in a, when it or a layer around it moved; else null. */
export function pathInA(info: DiffInfo, path: string): string | null {
  let best: [string, string] | null = null;
  for (const m of info.moved) {
    const [, to] = m;
    if ((path === to || path.startsWith(`${to}.`)) && (!best || to.length > best[1].length)) best = m;
  }
  return best ? best[0] + path.slice(best[1].length) : null;
}

/** "in a: layers.3" for a node or edge shown in a layer that moved (a removed one is a's). */
function movedItems(index: GraphIndex, id: string, info: DiffInfo): InfoItem[] {
  if (info.moved.length === 0) return [];
  const edge = index.edges.get(id);
  const node = index.nodes.get(edge ? edge.source : id);
  if (!node?.group || (edge ?? node).diff?.status === "removed") return [];
  const path = index.groups.get(node.group)?.name;
  const there = path ? pathInA(info, path) : null;
  return there ? [{ label: `in ${info.labels[0]}`, value: there, hint: "its layer moved: matched by structure" }] : [];
}

/** The inspector with nothing selected: counts, then the first marked items of each kind. */
export function diffOverview(index: GraphIndex, info: DiffInfo): Inspection {
  const { nodes, edges } = graphTally(index.graph);
  const [a, b] = info.labels;
  const count = (s: DiffStatus): InfoItem => ({
    label: s,
    value: `${plural(nodes[s], "node")} \u00b7 ${plural(edges[s], "edge")}`,
  });
  const same = !tallyText(nodes) && !tallyText(edges);
  return {
    kind: "overview",
    id: "",
    title: `Differences ${a} \u2192 ${b}`,
    subtitle: same
      ? "the two graphs are the same"
      : "click an entry to show it; \u2039 \u203a or p / n step through them",
    sections: [
      { title: "Counts", items: [...DIFF_STATUSES.map(count), { label: "compared", value: comparedText(info) }] },
      ...movedSection(info),
      ...listSections(index, index.graph.nodes, index.graph.edges, LIST_LIMIT),
    ],
  };
}

/** The inspector's "Difference" sections for a selected node, edge or layer. */
export function diffSections(
  index: GraphIndex,
  id: string,
  drawn: VisibleEdge | undefined,
  info: DiffInfo,
): InfoSection[] {
  const own = index.nodes.get(id)?.diff ?? index.edges.get(id)?.diff;
  const title = `Difference ${info.labels[0]} \u2192 ${info.labels[1]}`;
  if (own) return [{ title, items: [...markItems(own, info), ...movedItems(index, id, info)] }];
  if (index.nodes.has(id) || index.edges.has(id))
    return [{ title, items: [{ label: "status", value: "the same in both" }, ...movedItems(index, id, info)] }];
  if (drawn && drawn.edges.length > 1) {
    const merged = listSections(index, [], drawn.edges, LIST_LIMIT);
    return merged.length > 0 ? merged.map((s) => ({ ...s, title: `${title}: ${s.title.toLowerCase()}` })) : [];
  }
  const inst = parseInstanceId(index, id);
  if (!inst) return [];
  const group = index.groups.get(inst.group);
  const nodes = index.descendantNodes(inst.group).map((n) => index.nodes.get(n) as GraphNode);
  const edges = nodes.flatMap((n) => index.outEdges.get(n.id) ?? []);
  const lists = listSections(index, nodes, edges, LIST_LIMIT);
  if (lists.length === 0) return [{ title, items: [{ label: "status", value: "no differences inside" }] }];
  const label = group ? groupTitle(group) : inst.group;
  return lists.map((s) => ({ ...s, title: `${title} in ${label}: ${s.title.toLowerCase()}` }));
}

/** One tooltip line for a marked node or edge (empty when unmarked). */
export function diffTooltip(index: GraphIndex, ids: readonly string[], info: DiffInfo): string[] {
  const lines: string[] = [];
  for (const id of ids) {
    const mark = index.nodes.get(id)?.diff ?? index.edges.get(id)?.diff;
    if (!mark) continue;
    const changes = shownChanges(mark)
      .slice(0, 3)
      .map((c) => `${changeLabel(c)} ${changeValue(c)}`);
    lines.push([statusText(mark, info), ...changes].join(" \u00b7 "));
    if (lines.length >= 3) break;
  }
  return lines;
}
