import { describe, expect, it } from "vitest";
import { inspect } from "./describe";
import { gradOverview } from "./describe_stats";
import { visibleGraphToDot } from "./dot";
import { groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import { graphProblems, nonFiniteJump, problemBadges, problemsAt, problemWhere } from "./problems";
import { fixture } from "./test_fixtures";
import type { GraphPayload } from "./types";
import { buildVisibleGraph } from "./visible";

/** The LeNet fixture with statistics and what problems() wrote: an exploding op in a layer,
 * a forward NaN named only by its layer, and a frozen parameter (information). */
function withProblems(): { graph: GraphPayload; op: string; layer: string; layerId: string } {
  const graph = fixture("lenet");
  for (const e of graph.edges) e.stats = { norm: 1, max_abs: 1, mean_abs: 0.1, zero_fraction: 0, nan: 0, inf: 0 };
  const op = graph.nodes.find((n) => n.kind === "op" && n.group)!;
  const group = graph.groups.find((g) => g.id === op.group)!;
  const other = graph.groups.find((g) => g.id !== group.id && g.parent !== null)!;
  graph.meta = {
    ...graph.meta,
    first_nonfinite: graph.nodes[0].id,
    problems: [
      {
        kind: "nonfinite",
        name: "LogScale",
        reason: "its forward output was the first to hold a NaN/Inf",
        node: null,
        layer: other.name,
        severity: "problem",
        factor: null,
        affected: [],
        site: "m.py:3",
      },
      {
        kind: "exploding",
        name: op.name,
        reason: "grows x1.2e3",
        node: op.id,
        layer: group.name,
        severity: "problem",
        factor: 1234,
        affected: [],
        site: null,
      },
      {
        kind: "frozen",
        name: "fc.4.bias",
        reason: "stop_gradient=True",
        node: null,
        layer: "fc.4",
        severity: "info",
        factor: null,
        affected: [],
        site: null,
      },
      { kind: 7, name: "broken entry: left out" },
    ],
  };
  return { graph, op: op.id, layer: other.name, layerId: other.id };
}

describe("problems() findings in the explorer", () => {
  it("reads meta.problems, leaving out what is not a finding", () => {
    const { graph } = withProblems();
    expect(graphProblems(graph).map((p) => p.kind)).toEqual(["nonfinite", "exploding", "frozen"]);
    expect(graphProblems({ ...graph, meta: {} })).toEqual([]);
    expect(problemWhere(graphProblems(graph)[2])).toBe("fc.4.bias"); // a parameter names its layer
  });

  it("jumps to the culprit problems() names: the forward layer, else the backward's GradNode", () => {
    const { graph, layerId } = withProblems();
    expect(nonFiniteJump(graph)).toBe(layerId);
    const legacy = { ...graph, meta: { first_nonfinite: graph.nodes[0].id } };
    expect(nonFiniteJump(legacy)).toBe(graph.nodes[0].id);
  });

  it("badges the culprit node and its layer, never information", () => {
    const { graph, op, layerId } = withProblems();
    const badges = problemBadges(graph);
    expect(badges.get(op)).toBe("\u26a0 exploding \u00d71.2e+3");
    expect(badges.get(layerId)).toBe("\u26a0 NaN/Inf made here");
    expect([...badges.values()].some((b) => b.includes("frozen"))).toBe(false);
    const index = buildIndex(graph);
    const open = buildVisibleGraph(index, new Set(groupsToDepth(index, 99)));
    expect(visibleGraphToDot(index, open)).toMatch(
      new RegExp(`id="pvw-${op}" class="pvw-op pvw-problem" label="[^"]*\\\\n\u26a0 exploding`),
    );
  });

  it("lists problems, then information apart, in the overview; the culprit's inspector says why", () => {
    const { graph, op, layerId } = withProblems();
    const index = buildIndex(graph);
    const overview = gradOverview(index)!;
    const problems = overview.sections.find((s) => s.title === "Problems")!;
    expect(problems.items.map((i) => [i.label, i.ref])).toEqual([
      ["first NaN/Inf", layerId],
      ["exploding", op],
    ]);
    expect(overview.sections.find((s) => s.title === "For information")!.items[0].value).toBe("fc.4.bias");
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, 99)));
    expect(inspect(index, vg, op)!.sections.find((s) => s.title === "Problem")!.items[0].value).toBe("grows x1.2e3");
    expect(problemsAt(graph, layerId).map((p) => p.kind)).toEqual(["nonfinite"]);
  });
});
