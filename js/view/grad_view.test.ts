import { describe, expect, it } from "vitest";
import { edgeTooltip, inspect, nodeTooltip } from "./describe";
import { gradOverview } from "./describe_stats";
import { visibleGraphToDot } from "./dot";
import { groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import { NONFINITE_COLOUR, normScale } from "./grad_stats";
import { gradColouring, mergeStats, seriesScale, sparkline, statsAt, stepSeries } from "./grad_view";
import { fixture } from "./test_fixtures";
import type { GradStats, GraphPayload } from "./types";
import { buildVisibleGraph } from "./visible";

const s = (norm: number, extra: Partial<GradStats> = {}): GradStats => ({
  norm,
  max_abs: norm,
  mean_abs: norm / 10,
  zero_fraction: 0,
  nan: 0,
  inf: 0,
  ...extra,
});

/** The LeNet fixture with statistics: norms 10^-k along the edges, a NaN on the last edge into
 * a parameter, a dead parameter, and three kept steps. */
function withStats(): { graph: GraphPayload; nanEdge: string; dead: string } {
  const graph = fixture("lenet");
  graph.edges.forEach((e, k) => {
    e.stats = s(10 ** -(k % 5));
  });
  const params = graph.nodes.filter((n) => n.kind === "param");
  const dead = params[0];
  dead.grad_status = "zero";
  const nanEdge = [...graph.edges].reverse().find((e) => e.target === params[params.length - 1].id)!;
  nanEdge.stats = s(1, { nan: 4 });
  graph.meta = {
    ...graph.meta,
    first_nonfinite: nanEdge.source,
    nonfinite_in_forward: false,
    steps: {
      index: [7, 8, 9],
      norm: Object.fromEntries(graph.edges.map((e) => [e.id, [100, null, e.stats!.norm]])),
      nonfinite: { [nanEdge.id]: [0, 0, 4] },
    },
  };
  return { graph, nanEdge: nanEdge.id, dead: dead.id };
}

describe("gradient statistics in the drawing", () => {
  it("reads the kept steps and what an edge carried at each", () => {
    const { graph, nanEdge } = withStats();
    const series = stepSeries(graph)!;
    expect(series.index).toEqual([7, 8, 9]);
    const e = graph.edges.find((x) => x.id === nanEdge)!;
    expect(statsAt(e, series, 0)).toMatchObject({ norm: 100, nan: 0 });
    expect(statsAt(e, series, 1)).toBeNull(); // not recorded that step
    expect(statsAt(e, series, 2)).toBe(e.stats); // the last step is the edge's own
    expect(stepSeries({ ...graph, meta: {} })).toBeNull();
    expect(stepSeries({ ...graph, meta: { steps: { index: [1], norm: {} } } })).toBeNull();
  });

  it("scales over every kept step, so a colour means one norm on each", () => {
    const { graph } = withStats();
    const series = stepSeries(graph)!;
    expect(normScale(graph)!.hi).toBe(0);
    expect(seriesScale(graph, series)!.hi).toBe(2); // step 7's 100
  });

  it("merges: the largest norm, every NaN and Inf", () => {
    expect(mergeStats([s(1), s(5, { inf: 1 }), null, s(2, { nan: 2 })])).toMatchObject({ norm: 5, nan: 2, inf: 1 });
    expect(mergeStats([null])).toBeNull();
  });

  it("colours edges, reddens the collapsed group with the NaN, badges the dead parameter", () => {
    const { graph, nanEdge, dead } = withStats();
    const index = buildIndex(graph);
    const series = stepSeries(graph);
    const grad = gradColouring(index, seriesScale(graph, series)!, series, null);
    const open = buildVisibleGraph(index, new Set(groupsToDepth(index, 99)));
    const dot = visibleGraphToDot(index, open, { rankdir: "TB", edgeLabels: false, grad });
    expect(dot).toMatch(
      new RegExp(`id="pvw-${nanEdge}" class="pvw-single pvw-graded" color="${NONFINITE_COLOUR}" penwidth=2`),
    );
    expect(dot).toMatch(new RegExp(`id="pvw-${dead}" class="pvw-param pvw-badge" label="[^"]*\\\\n0 grad"`));
    const closed = buildVisibleGraph(index, new Set(groupsToDepth(index, 0)));
    const bad = closed.nodes.filter((vn) => grad.groupNonFinite(vn));
    expect(bad.length).toBe(1);
    expect(visibleGraphToDot(index, closed, { rankdir: "TB", edgeLabels: false, grad })).toContain(
      `class="pvw-group pvw-nonfinite"`,
    );
    // Step 7 had no NaN: nothing red then.
    const before = gradColouring(index, seriesScale(graph, series)!, series, 0);
    expect(closed.nodes.some((vn) => before.groupNonFinite(vn))).toBe(false);
    expect(before.edgeColour(open.edgeById.get(nanEdge)!)).not.toBe(NONFINITE_COLOUR);
    // Without colouring the drawing is as before, badge aside.
    expect(visibleGraphToDot(index, open)).not.toContain("pvw-graded");
  });

  it("describes statistics in tooltips, the inspector and the overview", () => {
    const { graph, nanEdge, dead } = withStats();
    const index = buildIndex(graph);
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, 99)));
    expect(edgeTooltip(index, vg.edgeById.get(nanEdge)!).join("\n")).toContain("4 NaN");
    const edge = inspect(index, vg, nanEdge)!;
    const section = edge.sections.find((x) => x.title === "Gradient statistics (step 9)")!;
    expect(section.items.find((i) => i.label === "NaN")?.value).toBe("4");
    const spark = section.items.find((i) => i.spark)!;
    expect(spark.spark!.steps).toEqual([7, 8, 9]);
    expect(spark.value).toBe("1.0e+2 \u2013 NaN/Inf");
    const first = inspect(index, vg, graph.meta!.first_nonfinite as string)!;
    const born = first.sections.find((x) => x.title === "First NaN/Inf")!;
    expect(born.items[0].value).toMatch(/^the backward: this GradNode made/);
    // a user's hook on its input ran between its senders and it: not said to be its own
    const hooked = buildIndex({ ...graph, meta: { ...graph.meta, nonfinite_after_user_hook: true } });
    const hookedBorn = inspect(hooked, vg, graph.meta!.first_nonfinite as string)!;
    expect(hookedBorn.sections.find((x) => x.title === "First NaN/Inf")!.items[0].value).toBe(
      "the backward: here or in a hook of yours (Tensor.register_hook) on this GradNode's input",
    );
    expect(inspect(index, vg, dead)!.sections.find((x) => x.title === "Gradient")!.items[0].value).toContain("0 grad");
    expect(nodeTooltip(index, vg, dead)).toContain("gradient: its gradient is all zeros (0 grad)");
    const closed = buildVisibleGraph(index, new Set(groupsToDepth(index, 0)));
    const group = closed.nodes.find((n) => n.kind === "group")!;
    expect(nodeTooltip(index, closed, group.id).join("\n")).toMatch(/max \u2016g\u2016 1\.0e\+0/);
    const overview = gradOverview(index)!;
    expect(overview.sections.map((x) => x.title)).toEqual([
      "Problems",
      "Largest \u2016g\u2016 (top 10, step 9)",
      "Smallest \u2016g\u2016 (top 10, step 9)",
    ]);
    expect(overview.sections[1].items).toHaveLength(10);
    expect(overview.sections[1].items.every((i) => i.ref && index.edges.has(i.ref))).toBe(true);
    expect(gradOverview(buildIndex(fixture("lenet")))).toBeNull();
  });

  it("a tooltip gives the norm of the step the slider colours the edge by, and names it", () => {
    const { graph, nanEdge } = withStats();
    const index = buildIndex(graph);
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, 99)));
    const ve = vg.edgeById.get(nanEdge)!;
    const at = (k: number | null): string[] => edgeTooltip(index, ve, "backward", k);
    // Step 7 (position 0): coloured by its norm 100, not by the last step's 1 with 4 NaN.
    expect(at(0)).toContain("step 7: \u2016g\u2016 1.0e+2");
    expect(at(0).join("\n")).toContain("step 9: \u2016g\u2016 1.0e+0");
    expect(at(0).findIndex((l) => l.startsWith("step 7"))).toBeLessThan(at(0).findIndex((l) => l.startsWith("step 9")));
    expect(at(1)).toContain("step 8: no gradient recorded");
    // The last step, or no slider: the edge's own statistics, as before.
    expect(at(2)).toEqual(at(null));
    expect(at(null).some((l) => l.startsWith("step "))).toBe(false);
    // A collapsed layer holding the NaN edge: red at step 9 only, and its tooltip says so.
    const closed = buildVisibleGraph(index, new Set(groupsToDepth(index, 0)));
    const holds = (id: string): boolean => nodeTooltip(index, closed, id).join("\n").includes("4 NaN");
    const group = closed.nodes.find((n) => n.kind === "group" && holds(n.id))!;
    const groupTip = (k: number | null): string => nodeTooltip(index, closed, group.id, "backward", k).join("\n");
    expect(groupTip(0)).toContain(
      "step 7: max \u2016g\u2016 1.0e+2 \u00b7 step 9: max \u2016g\u2016 1.0e+0 \u00b7 4 NaN",
    );
    expect(groupTip(2)).toBe(groupTip(null));
    expect(groupTip(null)).not.toContain("step");
    const merged = { ...ve, edges: [ve.edges[0], graph.edges[0]] }; // two gradients drawn as one
    expect(edgeTooltip(index, merged, "backward", 0)).toContain("step 7: largest \u2016g\u2016 1.0e+2");
  });

  it("says why an edge of a graph with statistics has none: complex, integer, no elements", () => {
    const { graph } = withStats();
    const [c, i, empty, plain] = graph.edges.slice(0, 4);
    for (const e of [c, i, empty]) delete e.stats;
    c.grad = { dtype: "complex64", shape: [2, 4], place: "cpu" };
    i.grad = { dtype: "int64", shape: [3], place: "cpu" };
    empty.grad = { dtype: "float32", shape: [0, 3], place: "cpu" };
    const index = buildIndex(graph);
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, 99)));
    const tip = (id: string): string => edgeTooltip(index, vg.edgeById.get(id)!).join("\n");
    expect(tip(c.id)).toContain("no statistics: complex64 gradients are not reduced");
    expect(tip(i.id)).toContain("no statistics: int64 gradients are not reduced");
    expect(tip(empty.id)).toContain("no statistics: the gradient has no elements");
    expect(tip(plain.id)).not.toContain("no statistics");
    const why = inspect(index, vg, c.id)!.sections.find((x) => x.title === "Gradient statistics");
    expect(why?.items[0].value).toContain("complex64");
    // A graph without statistics says nothing of them.
    const bare = fixture("lenet");
    bare.edges[0].grad = { dtype: "complex64", shape: [2], place: "cpu" };
    const bareIndex = buildIndex(bare);
    const bareVg = buildVisibleGraph(bareIndex, new Set(groupsToDepth(bareIndex, 99)));
    expect(edgeTooltip(bareIndex, bareVg.edgeById.get(bare.edges[0].id)!).join("\n")).not.toContain("statistics");
  });

  it("draws a sparkline on a log scale, broken where a step is missing", () => {
    const line = sparkline([1, 10, null, 100, 1000], 100, 20);
    // log10 0..3 over y 18..2; x steps of 24; the gap splits the line in two.
    expect(line.lines).toEqual(["2,18 26,12.7", "74,7.3 98,2"]);
    expect(line.points.map((p) => p.k)).toEqual([0, 1, 3, 4]);
    expect(line.points[0].y).toBeGreaterThan(line.points[3].y); // larger norms higher up
    expect(sparkline([null, 0], 100, 20)).toEqual({ lines: [], points: [] });
  });
});
