// Text for the inspector panel and the hover tooltip. Pure: returns plain data the UI renders.
import { isProgramGroup } from "./program_groups";
import { countsText, formatGrad, formatGradFull, formatShape, gradSummary, groupTitle, plural } from "./format";
import { callText } from "./dot";
import { carried, opTitle, shownEnds, type Reading } from "./forward";
import { groupStats, parseInstanceId, type GraphIndex } from "./graph_index";
import { inspectRun, memberSections, runTooltip } from "./describe_run";
import { parseRunId } from "./folding";
import {
  edgeStatsLines,
  edgeStatsSections,
  groupStatsText,
  noStatsItems,
  mergedStatsLine,
  nodeStatsLines,
  nodeStatsSections,
  problemSections,
} from "./describe_stats";
import { gradSourceText, type NodeField, nodeSourceText } from "./grad_source";
import { jittorSections, jittorTooltip } from "./jittor";
import { pyLayerFacts, pyLayerSections } from "./pylayers";
import type { GraphEdge, GraphNode, SlotInfo } from "./types";
import type { VisibleEdge, VisibleGraph } from "./visible";
import type { InfoItem, InfoSection, Inspection } from "./inspection";

export type { InfoItem, InfoSection, Inspection } from "./inspection";

const KIND_TEXT: Record<GraphNode["kind"], string> = {
  op: "operation",
  param: "parameter",
  output: "output",
  program_op: "op of a compiled program",
};

const LIST_LIMIT = 12;

/** Short name of a node as shown in lists: "Matmul" ("matmul" read forward), "fc.0.weight". */
export function nodeTitle(node: GraphNode, reading: Reading = "backward"): string {
  if (node.kind === "param") return node.param?.name ?? "leaf tensor";
  return opTitle(node.name, reading);
}

function refTitle(index: GraphIndex, id: string, reading: Reading = "backward"): string {
  const node = index.nodes.get(id);
  if (node) return nodeTitle(node, reading);
  const group = index.groups.get(id);
  return group ? groupTitle(group) : id;
}

/** "Gradient" or "Tensor": what an edge carries in this reading, as a title. */
function carriedTitle(reading: Reading): string {
  const word = carried(reading);
  return word[0].toUpperCase() + word.slice(1);
}

function section(title: string, items: InfoItem[]): InfoSection[] {
  return items.length > 0 ? [{ title, items }] : [];
}

function limited(items: InfoItem[], total: number): InfoItem[] {
  if (total <= LIST_LIMIT) return items;
  return [...items.slice(0, LIST_LIMIT), { label: "\u2026", value: `${total - LIST_LIMIT} more` }];
}

function slotItems(slots: SlotInfo[] | undefined): InfoItem[] {
  return (slots ?? []).map((s) => ({ label: s.name, value: formatGradFull(s) }));
}

/** "conv.0 · Conv2D", or null when the node is outside every layer. */
export function layerOf(index: GraphIndex, id: string): string | null {
  const chain = index.ancestors(id);
  const group = chain.length > 0 ? index.groups.get(chain[0]) : undefined;
  return group ? groupTitle(group) : null;
}

/** "model.py:42 (forward)"; `full` keeps the whole path. */
export function callSiteText(node: GraphNode, full = false): string | null {
  const cs = node.call_site;
  if (!cs) return null;
  const file = full ? cs.file : (cs.file.split(/[\\/]/).pop() ?? cs.file);
  return `${file}:${cs.line}${cs.function ? ` (${cs.function})` : ""}`;
}

export function inspectNode(index: GraphIndex, id: string, reading: Reading = "backward"): Inspection | null {
  const node = index.nodes.get(id);
  if (!node) return null;
  const chain = index.ancestors(id);
  // Where each annotation came from, when the document says (schema 2.3).
  const from = (field: NodeField): InfoItem[] => {
    const text = nodeSourceText(index.graph, id, field);
    return text ? [{ label: "source", value: text }] : [];
  };
  const layer: InfoItem[] = chain.map((g, i) => ({
    label: i === 0 ? "layer" : "in",
    value: refTitle(index, g),
    ref: g,
  }));
  if (layer.length > 0) layer.splice(1, 0, ...from("group"));
  const param = node.param
    ? [
        { label: "name", value: node.param.name },
        { label: "shape", value: formatShape(node.param.shape) },
        { label: "dtype", value: node.param.dtype ?? "?" },
        ...from("param"),
      ]
    : [];
  const site = callSiteText(node);
  // A Jittor graph holds forward and backward ops alike: their slots are plain inputs/outputs.
  const io = index.graph.meta?.source === "jittor" ? ["Inputs", "Outputs"] : ["Backward inputs", "Backward outputs"];
  const ins = index.inEdges.get(id) ?? [];
  const outs = index.outEdges.get(id) ?? [];
  const forward = reading === "forward"; // what comes in is what the backward sends out
  const neighbour = (label: string, e: GraphEdge, end: string) => ({
    label,
    value: `${refTitle(index, end, reading)}  ${formatGrad(e.grad)}`,
    ref: end,
  });
  const neighbours = [
    ...(forward ? outs : ins).map((e) => neighbour("\u2190 from", e, shownEnds(e, reading).from)),
    ...(forward ? ins : outs).map((e) => neighbour("\u2192 to", e, shownEnds(e, reading).to)),
  ];
  return {
    kind: "node",
    id,
    title: forward ? nodeTitle(node, reading) : node.name,
    subtitle: `${KIND_TEXT[node.kind]} \u00b7 ${id}${forward ? ` \u00b7 ${node.name}` : ""}`,
    sections: [
      ...section("Layer", layer),
      ...section("Parameter", param),
      ...section("Output tensor", node.tensor ? [{ label: "tensor", value: formatGradFull(node.tensor) }] : []),
      ...nodeStatsSections(index, node, site),
      ...section(
        "Forward call",
        site ? [{ label: "at", value: site, hint: callSiteText(node, true) ?? "" }, ...from("call_site")] : [],
      ),
      ...section(io[0], slotItems(node.inputs)),
      ...section(io[1], slotItems(node.outputs)),
      ...section("Backward slots", slotsHint(index, node)),
      ...jittorSections(index.graph, id, (ref) => refTitle(index, ref, reading)),
      ...pyLayerSections(index.graph, id),
      ...section("Neighbours", limited(neighbours, neighbours.length)),
    ],
  };
}

export const SLOTS_HINT = "not recorded for this graph; trace(model, slots=True) records them";

/** Why an op shows no slots: the tracer skips Paddle's costly slot log on big graphs. */
function slotsHint(index: GraphIndex, node: GraphNode): InfoItem[] {
  const sources = index.graph.meta?.annotations;
  const logged = Array.isArray(sources) && sources.includes("vlog");
  // A graph read from elsewhere (a dump, Jittor) cannot be traced again: no hint to.
  const elsewhere = typeof index.graph.meta?.source === "string";
  if (logged || elsewhere || node.kind === "param" || node.inputs?.length || node.outputs?.length) return [];
  return [{ label: "slots", value: SLOTS_HINT }];
}

/** Slot name of the gradient an edge carries, when the tracer recorded it. */
export function edgeSlot(index: GraphIndex, edge: GraphEdge): string | null {
  if (edge.slot) return edge.slot;
  const source = index.nodes.get(edge.source);
  const slot = edge.index !== undefined ? source?.outputs?.[edge.index] : undefined;
  return slot?.name ?? null;
}

function gradItems(index: GraphIndex, edge: GraphEdge): InfoItem[] {
  const g = edge.grad;
  const slot = edgeSlot(index, edge);
  const source = g ? gradSourceText(index.graph, edge.id) : null;
  return [
    { label: "dtype", value: g?.dtype ?? "?" },
    { label: "shape", value: formatShape(g?.shape) },
    { label: "place", value: g?.place ?? "?" },
    ...(slot ? [{ label: "slot", value: slot }] : []),
    ...(source ? [{ label: "source", value: source }] : []),
  ];
}

export function inspectEdge(
  index: GraphIndex,
  vg: VisibleGraph,
  id: string,
  reading: Reading = "backward",
): Inspection | null {
  const edge = index.edges.get(id);
  const drawn = vg.edgeById.get(id);
  const title = (id: string): string => refTitle(index, id, reading);
  if (edge && (!drawn || drawn.edges.length === 1)) {
    const { from, to } = shownEnds(edge, reading);
    return {
      kind: "edge",
      id,
      title: `${title(from)} \u2192 ${title(to)}`,
      subtitle: `${carried(reading)} edge \u00b7 ${id}`,
      sections: [
        {
          title: "Ends",
          items: [
            { label: "from", value: title(from), ref: from },
            { label: "to", value: title(to), ref: to },
          ],
        },
        { title: carriedTitle(reading), items: gradItems(index, edge) },
        ...edgeStatsSections(index, edge),
        ...section("Gradient statistics", noStatsItems(index, edge)),
      ],
    };
  }
  if (!drawn) return null;
  const items = drawn.edges.map((e) => ({
    label: `${title(shownEnds(e, reading).from)} \u2192 ${title(shownEnds(e, reading).to)}`,
    value: formatGradFull(e.grad),
    ref: e.id,
  }));
  const stats = mergedStatsLine(drawn.edges);
  const ends = shownEnds(drawn, reading);
  return {
    kind: "edge",
    id,
    title: `${title(ends.from)} \u2192 ${title(ends.to)}`,
    subtitle: `${plural(drawn.edges.length, carried(reading))} merged`,
    sections: [
      {
        title: "Ends",
        items: [
          { label: "from", value: title(ends.from), ref: ends.from },
          { label: "to", value: title(ends.to), ref: ends.to },
        ],
      },
      ...section("Gradient statistics", stats ? [{ label: "merged", value: stats }] : []),
      { title: `${carriedTitle(reading)}s`, items: limited(items, items.length) },
    ],
  };
}

/** Payload edges crossing a group's boundary: into it (from outside) and out of it. */
export function boundaryEdges(index: GraphIndex, groupId: string): { into: GraphEdge[]; out: GraphEdge[] } {
  const into: GraphEdge[] = [];
  const out: GraphEdge[] = [];
  const inside = new Set(index.descendantNodes(groupId));
  for (const e of index.edges.values()) {
    const s = inside.has(e.source);
    const t = inside.has(e.target);
    if (t && !s) into.push(e);
    if (s && !t) out.push(e);
  }
  return { into, out };
}

export function inspectGroup(index: GraphIndex, id: string, reading: Reading = "backward"): Inspection | null {
  const group = index.groups.get(id);
  if (!group) return null;
  const stats = groupStats(index, id);
  const calls = index.calls(id).length;
  const { into, out } = boundaryEdges(index, id);
  const [enter, leave] = reading === "forward" ? [out, into] : [into, out]; // tensors flow the other way
  const parent = index.ancestors(id)[0];
  const children = index.childGroups.get(id) ?? [];
  const params = index
    .descendantNodes(id)
    .map((n) => index.nodes.get(n) as GraphNode)
    .filter((n) => n.kind === "param")
    .map((n) => ({ label: nodeTitle(n), value: formatShape(n.param?.shape), ref: n.id }));
  const values = stats.values === null ? "" : ` \u00b7 ${stats.values.toLocaleString("en-US")} values`;
  const grads = groupStatsText(index, index.descendantNodes(id));
  return {
    kind: "group",
    id,
    title: group.name || group.type,
    subtitle: isProgramGroup(group) ? "the backward ops of one compiled program" : `${group.type} \u00b7 layer group`,
    sections: [
      ...problemSections(index, id),
      {
        title: "Layer",
        items: [
          { label: "type", value: group.type },
          { label: "path", value: group.name },
          ...(parent ? [{ label: "in", value: refTitle(index, parent), ref: parent }] : []),
          ...limited(
            children.map((c) => ({ label: "contains", value: refTitle(index, c), ref: c })),
            children.length,
          ),
        ],
      },
      ...memberSections(index, id), // one of repeated blocks
      {
        title: "Contents",
        items: [
          isProgramGroup(group)
            ? { label: "ops", value: `${stats.nodes}, run as one GradNode` }
            : { label: "GradNodes", value: `${stats.nodes} (${countsText(stats.ops, stats.params)})` },
          ...(calls > 1
            ? [{ label: "drawn as", value: `${calls} separate parts (used more than once, or not connected)` }]
            : []),
          { label: "parameters", value: `${plural(stats.params, "tensor")}${values}` },
          ...(grads ? [{ label: "gradients", value: grads }] : []),
        ],
      },
      ...section("Parameters", limited(params, params.length)),
      ...section(
        `${carriedTitle(reading)}s in`,
        gradSummary(enter.map((e) => e.grad)).map((t) => ({ label: "in", value: t })),
      ),
      ...section(
        `${carriedTitle(reading)}s out`,
        gradSummary(leave.map((e) => e.grad)).map((t) => ({ label: "out", value: t })),
      ),
    ],
  };
}

/** Inspector content for any selectable id; null if the id is unknown. */
export function inspect(
  index: GraphIndex,
  vg: VisibleGraph,
  id: string,
  reading: Reading = "backward",
): Inspection | null {
  if (index.nodes.has(id)) return inspectNode(index, id, reading);
  if (parseRunId(index, id)) return inspectRun(index, vg, id); // repeated blocks
  const inst = parseInstanceId(index, id);
  if (inst) return inspectGroup(index, inst.group, reading);
  return inspectEdge(index, vg, id, reading);
}

function gradLine(grad: GraphEdge["grad"], reading: Reading): string {
  if (!grad) return `${carried(reading)}: unknown`;
  return `dtype ${grad.dtype ?? "?"} \u00b7 shape ${formatShape(grad.shape)} \u00b7 place ${grad.place ?? "?"}`;
}

/** `step` (also nodeTooltip's): the Step slider's position in meta.steps.index, or null. */
export function edgeTooltip(
  index: GraphIndex,
  ve: VisibleEdge,
  reading: Reading = "backward",
  step: number | null = null,
): string[] {
  const arrow = (e: { source: string; target: string }): string => {
    const { from, to } = shownEnds(e, reading);
    return `${refTitle(index, from, reading)} \u2192 ${refTitle(index, to, reading)}`;
  };
  const head = arrow(ve);
  if (ve.edges.length === 1) {
    const e = ve.edges[0];
    const slot = edgeSlot(index, e);
    const stats = edgeStatsLines(index, ve.edges, step);
    const none = stats.length > 0 ? [] : noStatsItems(index, e).map((i) => i.value);
    return [head, gradLine(e.grad, reading), ...(slot ? [`slot ${slot}`] : []), ...stats, ...none];
  }
  const lines = ve.edges.slice(0, LIST_LIMIT).map((e) => `${arrow(e)}: ${formatGradFull(e.grad)}`);
  if (ve.edges.length > LIST_LIMIT) lines.push(`\u2026 ${ve.edges.length - LIST_LIMIT} more`);
  const stats = edgeStatsLines(index, ve.edges, step);
  return [`${head} \u00b7 ${ve.edges.length} ${carried(reading)}s cross`, ...stats, ...lines];
}

export function nodeTooltip(
  index: GraphIndex,
  vg: VisibleGraph,
  id: string,
  reading: Reading = "backward",
  step: number | null = null,
): string[] {
  const node = index.nodes.get(id);
  if (node) {
    const layer = layerOf(index, id);
    const op = opTitle(node.name, reading); // read forward, the GradNode's name when no op is known
    const lines = [
      node.kind === "param" ? nodeTitle(node) : reading === "forward" && op === node.name ? op : `${op} (${node.name})`,
    ];
    if (node.param) lines.push(`parameter ${formatGrad({ ...node.param, place: null })}`);
    if (node.tensor) lines.push(`output ${formatGradFull(node.tensor)}`);
    if (layer) lines.push(`layer ${layer}`);
    lines.push(...jittorTooltip(index.graph, id, (ref) => refTitle(index, ref, reading)));
    const py = pyLayerFacts(index.graph, id);
    if (py?.layer) lines.push(`recomputes ${py.layer}, hiding ${plural(py.hidden.length, "parameter")}`);
    const site = callSiteText(node);
    if (site) lines.push(site);
    return [...lines, ...nodeStatsLines(index, node)];
  }
  const run = vg.nodeById.get(id)?.run;
  if (run) return runTooltip(index, run); // folded repeated blocks
  const inst = parseInstanceId(index, id);
  const group = inst ? index.groups.get(inst.group) : undefined;
  if (!inst || !group) return [];
  const calls = index.calls(inst.group).length;
  const stats = groupStats(index, inst.group, calls > 1 ? inst.call : undefined);
  const hint = vg.clusterById.has(id) ? "click the label to collapse" : "click to expand";
  const grads = groupStatsText(
    index,
    calls > 1 ? (index.calls(inst.group)[inst.call] ?? []) : index.descendantNodes(inst.group),
    step,
  );
  return [
    groupTitle(group) + callText(inst.call, calls),
    countsText(stats.ops, stats.params),
    ...(grads ? [grads] : []),
    hint,
  ];
}
