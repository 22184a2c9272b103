// What the status line says when the visible-node budget changes what the user asked for, or
// while a long action runs. Pure text, so the wording is unit-tested.
import type { Fitted, LevelPlan, LevelStep } from "./budget";
import { groupTitle, plural } from "./format";
import type { VisibleGraph } from "./visible";
import type { GraphIndex } from "./graph_index";

/** "7,291 nodes" */
export function nodes(count: number): string {
  return `${count.toLocaleString("en-US")} node${count === 1 ? "" : "s"}`;
}

const limit = (budget: number): string => `the ${budget.toLocaleString("en-US")}-node limit of one layout`;

export function expandAllProgress(step: LevelStep, plan: LevelPlan): string {
  return `Expand all: opening depth ${step.depth} of ${plan.maxDepth} (${nodes(step.count)})\u2026`;
}

export function expandAllDone(plan: LevelPlan, budget: number): string {
  const last = plan.steps[plan.steps.length - 1];
  if (!plan.stop && plan.closed)
    return (
      `Expanded every layer group but ${plural(plan.closed, "group")} that Expand all keeps closed ` +
      `(repeated blocks, to_static programs: a click opens one) (${nodes(plan.count)}).`
    );
  if (!plan.stop) return `Expanded every layer group (${nodes(plan.count)}).`;
  const reached = last ? `Expanded to depth ${last.depth} of ${plan.maxDepth} (${nodes(last.count)})` : "Not expanded";
  return (
    `${reached}: depth ${plan.stop.depth} would draw ${nodes(plan.stop.count)}, over ${limit(budget)}. ` +
    "Open layer groups one at a time to see more."
  );
}

/** After opening group `id` was cut down to what fits. */
export function openGroupCut(
  index: GraphIndex,
  id: string,
  fitted: Fitted,
  requestedCount: number,
  budget: number,
): string {
  const group = index.groups.get(id);
  const name = group ? groupTitle(group) : id;
  const over = `would draw ${nodes(requestedCount)}, over ${limit(budget)}`;
  if (!fitted.expanded.includes(id)) return `Did not open ${name}: it ${over}. Collapse other groups first.`;
  return `Opened ${name} with ${fitted.left.length} of its inner groups closed: all of them ${over}.`;
}

/** After any other request (depth, Python's expand_all, ...) was cut down to what fits. */
export function requestCut(fitted: Fitted, requestedCount: number, budget: number): string {
  return (
    `Showing ${nodes(fitted.count)}: the requested groups would draw ${nodes(requestedCount)}, ` +
    `over ${limit(budget)}, so ${fitted.left.length} of them stay closed.`
  );
}

export function truncated(shown: number, total: number, budget: number): string {
  return (
    `Showing the ${nodes(shown)} nearest the outputs of ${nodes(total)}: even with every layer ` +
    `group closed the graph is over ${limit(budget)}.`
  );
}

export function layingOut(count: number): string {
  return `Laying out ${nodes(count)}\u2026`;
}

export function layoutFailed(count: number | null, reason: string, fallback: string): string {
  const what = count === null ? "this graph" : nodes(count);
  return `Graphviz could not lay out ${what} (${reason}). ${fallback}`;
}

/** While a big graph is read, over several tasks (explorer.ts). */
export function reading(bytes: number): string {
  return `Reading the graph (${(bytes / 1e6).toFixed(0)} MB)\u2026`;
}

/** The status line's counts: the whole graph, then what this view shows. */
export function counts(index: GraphIndex, vg: VisibleGraph): string {
  const g = index.graph;
  const collapsed = vg.nodes.filter((n) => n.kind === "group").length;
  // The ops inside compiled programs (to_static) are not GradNodes: counted apart.
  const programOps = g.nodes.filter((n) => n.kind === "program_op").length;
  const ops = programOps ? ` + ${plural(programOps, "program op")}` : "";
  return (
    `${plural(g.nodes.length - programOps, "GradNode")}${ops} \u00b7 ${plural(g.edges.length, "edge")} \u00b7 ` +
    `${plural(g.groups.length, "layer group")} \u2014 showing ${plural(vg.nodes.length, "node")} ` +
    `(${plural(collapsed, "collapsed group")}), ${plural(vg.edges.length, "edge")}`
  );
}
