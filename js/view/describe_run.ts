// Label, tooltip and inspector text for a run of repeated blocks (repeats.ts, folding.ts):
// how many blocks, which, what each holds and what all hold together, the gradients entering
// and leaving it. Pure; plain data the UI renders.
import type { InfoItem, InfoSection, Inspection } from "./inspection";
import { groupStatsText } from "./describe_stats";
import { parseRunId, sliceTitle, type RunSlice } from "./folding";
import { countsText, formatShape, gradSummary, groupTitle } from "./format";
import { groupStats, type GraphIndex } from "./graph_index";
import { rangeName, repeatsOf } from "./repeats";
import type { GraphEdge, GraphNode } from "./types";
import type { VisibleGraph } from "./visible";

const LIST_LIMIT = 12;

/** The folded node's label: "model.layers.0–31 · LlamaDecoderLayer ×32", "each 52 ops · 9 params". */
export function runLines(index: GraphIndex, s: RunSlice): string[] {
  const each = groupStats(index, s.members[0]);
  return [sliceTitle(s), `each ${countsText(each.ops, each.params)}`];
}

function nodesOf(index: GraphIndex, s: RunSlice): string[] {
  return s.members.flatMap((m) => index.descendantNodes(m));
}

/** Payload edges entering the slice from outside, and leaving it. */
export function sliceBoundary(index: GraphIndex, s: RunSlice): { into: GraphEdge[]; out: GraphEdge[] } {
  const inside = new Set(nodesOf(index, s));
  const into: GraphEdge[] = [];
  const out: GraphEdge[] = [];
  for (const id of inside) {
    for (const e of index.inEdges.get(id) ?? []) if (!inside.has(e.source)) into.push(e);
    for (const e of index.outEdges.get(id) ?? []) if (!inside.has(e.target)) out.push(e);
  }
  return { into, out };
}

const values = (n: number | null): string => (n === null ? "" : ` (${n.toLocaleString("en-US")} values)`);

/** Ops, parameters and parameter values of the whole slice, added up member by member (the
 * values are unknown, null, as soon as one member's are). */
function totals(index: GraphIndex, s: RunSlice): ReturnType<typeof groupStats> {
  const all = s.members.map((m) => groupStats(index, m));
  const sum = (key: "ops" | "params" | "nodes"): number => all.reduce((n, st) => n + st[key], 0);
  const known = all.every((st) => st.values !== null);
  return {
    ops: sum("ops"),
    params: sum("params"),
    nodes: sum("nodes"),
    values: known ? all.reduce((n, st) => n + (st.values as number), 0) : null,
  };
}

function memberName(index: GraphIndex, id: string): string {
  return index.groups.get(id)?.name ?? id;
}

function gradText(edges: GraphEdge[]): string {
  return edges.length === 0 ? "none" : gradSummary(edges.map((e) => e.grad)).join(", ");
}

export function runTooltip(index: GraphIndex, s: RunSlice): string[] {
  const each = groupStats(index, s.members[0]);
  const all = totals(index, s);
  const { into, out } = sliceBoundary(index, s);
  const grads = groupStatsText(index, nodesOf(index, s));
  const first = memberName(index, s.members[0]);
  const last = memberName(index, s.members[s.members.length - 1]);
  return [
    sliceTitle(s),
    `${s.members.length} blocks of the same structure, ${first} \u2026 ${last}`,
    `each ${countsText(each.ops, each.params)}${values(each.values)}`,
    `in all ${countsText(all.ops, all.params)}${values(all.values)}`,
    `gradients in ${gradText(into)} \u00b7 out ${gradText(out)}`,
    ...(grads ? [grads] : []),
    "click to unfold",
  ];
}

/** Members of `s` drawn on their own (open or unfolded) in `vg`: drawn as the member itself or
 * as what it holds, not inside a collapsed layer around them (which offered "fold again" for a
 * run nothing of which was drawn). */
function shownAlone(index: GraphIndex, vg: VisibleGraph, members: readonly string[]): string[] {
  return members.filter((m) => {
    const rep = vg.repOf.get(m);
    if (rep === undefined) return false;
    const vn = vg.nodeById.get(rep);
    if (vn?.run) return false;
    const id = vn ? (vn.node?.id ?? vn.group?.id) : vg.clusterById.get(rep)?.group.id;
    return id !== undefined && (id === m || index.ancestors(id).includes(m));
  });
}

/** The inspector for a run (or part of one) id, folded or not. */
export function inspectRun(index: GraphIndex, vg: VisibleGraph, id: string): Inspection | null {
  const s = parseRunId(index, id);
  if (!s) return null;
  const run = s.run;
  const whole = parseRunId(index, run.id) as RunSlice;
  const each = groupStats(index, s.members[0]);
  const all = totals(index, s);
  const { into, out } = sliceBoundary(index, s);
  const grads = groupStatsText(index, nodesOf(index, s));
  const base = memberName(index, s.members[0]);
  const params = index
    .descendantNodes(s.members[0])
    .map((n) => index.nodes.get(n) as GraphNode)
    .filter((n) => n.kind === "param")
    .map((n) => {
      const name = n.param?.name ?? "leaf tensor";
      const short = name.startsWith(`${base}.`) ? name.slice(base.length + 1) : name; // as in each block
      return { label: "param", value: `${short} ${formatShape(n.param?.shape)}` };
    });
  const members: InfoItem[] = s.members.map((m) => ({ label: "block", value: memberName(index, m), ref: m }));
  const folded = vg.nodeById.has(s.id) || s.members.some((m) => vg.nodeById.get(vg.repOf.get(m) ?? "")?.run);
  const alone = shownAlone(index, vg, run.members);
  const parent = run.parent ? index.groups.get(run.parent) : undefined;
  const view: InfoItem[] = [
    ...(folded
      ? [{ label: "unfold", value: `show the ${s.members.length} blocks`, ref: s.id, action: "unfold" as const }]
      : []),
    ...(alone.length > 0
      ? [
          {
            label: "fold",
            value: `fold ${rangeName(run, 0, run.members.length - 1)} again`,
            ref: run.id,
            action: "fold" as const,
          },
        ]
      : []),
  ];
  const section = (title: string, items: InfoItem[]): InfoSection[] => (items.length > 0 ? [{ title, items }] : []);
  const limited = (items: InfoItem[]): InfoItem[] =>
    items.length <= LIST_LIMIT
      ? items
      : [...items.slice(0, LIST_LIMIT), { label: "\u2026", value: `${items.length - LIST_LIMIT} more` }];
  return {
    kind: "group",
    id,
    title: `${rangeName(run, s.from, s.to)} \u00d7${s.members.length}`,
    subtitle: `${run.type} \u00b7 repeated block`,
    sections: [
      {
        title: "Repeated block",
        items: [
          { label: "type", value: run.type },
          {
            label: "blocks",
            value: `${s.members.length}: ${base} \u2026 ${memberName(index, s.members[s.members.length - 1])}`,
          },
          { label: "same", value: "ops, edges between them, parameter shapes" },
          ...(parent ? [{ label: "in", value: groupTitle(parent), ref: parent.id }] : []),
          ...(s.id !== run.id ? [{ label: "part of", value: sliceTitle(whole), ref: run.id }] : []),
        ],
      },
      ...section("View", view),
      {
        title: "Contents",
        items: [
          { label: "each", value: `${countsText(each.ops, each.params)}${values(each.values)}` },
          { label: "in all", value: `${countsText(all.ops, all.params)}${values(all.values)}` },
          ...(grads ? [{ label: "gradients", value: grads }] : []),
        ],
      },
      ...section("Parameters of each block", limited(params)),
      ...section(
        "Gradients in",
        gradSummary(into.map((e) => e.grad)).map((t) => ({ label: "in", value: t })),
      ),
      ...section(
        "Gradients out",
        gradSummary(out.map((e) => e.grad)).map((t) => ({ label: "out", value: t })),
      ),
      ...section("Blocks", limited(members)),
    ],
  };
}

/** For a member's own inspector: the run it belongs to. */
export function memberSections(index: GraphIndex, groupId: string): InfoSection[] {
  const run = repeatsOf(index).runOf(groupId);
  if (!run) return [];
  const whole = parseRunId(index, run.id) as RunSlice;
  const k = run.members.indexOf(groupId);
  return [
    {
      title: "Repeated block",
      items: [{ label: "block", value: `${k + 1} of ${run.members.length} in ${sliceTitle(whole)}`, ref: run.id }],
    },
  ];
}
