// A diff drawn with a folded run of repeated blocks (folding.ts): the run's node stands for
// every node of its blocks, so it carries the marks they hold, as a collapsed layer does.
// Expected counts are worked out from the JSON (members' nodes by their parent links).
import { describe, expect, it } from "vitest";
import { diffMarking, tallyText } from "./diff";
import { visibleGraphToDot } from "./dot";
import { groupsToDepth } from "./expansion";
import { foldRuns } from "./folding";
import { buildIndex } from "./graph_index";
import { indexedGroups, nodesInside, repeatFixture } from "./repeat_fixtures";
import { buildVisibleGraph } from "./visible";

describe("a folded run in a diff", () => {
  it("counts the marks of every block it stands for and takes their colour", () => {
    const graph = repeatFixture("llama_tiny");
    const layers = indexedGroups(graph, "model.layers");
    const inside = new Set(layers.flatMap((l) => [...nodesInside(graph, l)]));
    // Two nodes inside the run changed (in different blocks), one edge they send changed too.
    const marked = graph.nodes.filter((n) => inside.has(n.id) && n.kind === "op");
    marked[0].diff = { status: "changed", changes: [] };
    marked[marked.length - 1].diff = { status: "changed", changes: [] };
    const sent = graph.edges.find((e) => e.source === marked[0].id);
    if (!sent) throw new Error("the marked op sends no gradient");
    sent.diff = { status: "changed", changes: [] };
    graph.meta = { ...graph.meta, diff: { labels: ["a", "b"], rtol: 0.1, counts: {}, compared: ["shape"] } };
    const index = buildIndex(graph);
    const all = new Set(groupsToDepth(index, index.maxLevel + 1, true));
    const vg = buildVisibleGraph(index, all, foldRuns(index, all, { on: true, unfolded: new Set() }));
    const run = vg.nodes.find((vn) => vn.run);
    expect(run?.run?.members).toEqual(layers);
    const marking = diffMarking(index);
    expect(marking.groupLine(run!)).toBe(`\u0394 ${tallyText({ added: 0, removed: 0, changed: 3 })}`);
    expect(marking.nodeClass(run!)).toBe("pvw-diff-holds pvw-diff-changed");
    const dot = visibleGraphToDot(index, vg, { rankdir: "TB", edgeLabels: false, diff: marking });
    const line = dot.split("\n").find((l) => l.includes(`"${run!.id}" [`)) ?? "";
    expect(line).toContain("pvw-diff-holds");
    expect(line).toContain("\u0394 ~3");
  });
});
