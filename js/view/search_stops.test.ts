// Enter in the search box over a folded run (search.ts searchStops, as fold_control.ts steps
// them): every block holding a match is a stop of its own, the stops are the same in every
// view search's unfolding makes, so stepping visits each once and the count never jumps.
// Expected blocks are worked out from the JSON (nodes by their parent links).
import { describe, expect, it } from "vitest";
import { groupsToDepth } from "./expansion";
import { foldRuns } from "./folding";
import { buildIndex } from "./graph_index";
import { indexedGroups, nodesInside, repeatFixture } from "./repeat_fixtures";
import { searchGraph, searchStops } from "./search";
import { buildVisibleGraph } from "./visible";

describe("search stops over a folded Llama decoder stack", () => {
  const graph = repeatFixture("llama_tiny");
  const index = buildIndex(graph);
  const open = new Set(groupsToDepth(index, index.maxLevel + 1, true));
  const view = (unfolded: string[]) =>
    buildVisibleGraph(index, open, foldRuns(index, open, { on: true, unfolded: new Set(unfolded) }));
  const layers = indexedGroups(graph, "model.layers");

  it("steps through every block holding a match, with the same stops whatever search unfolded", () => {
    const hits = searchGraph(index, "rsqrt"); // RMSNorm: two in each layer, one in the final norm
    const holding = layers.filter((l) => {
      const inside = nodesInside(graph, l);
      return graph.nodes.some((n) => inside.has(n.id) && n.name.toLowerCase().includes("rsqrt"));
    });
    expect(holding).toEqual(layers);
    const first = searchStops(index, view([]), hits);
    // Each layer is a stop (folded in the run), and so is the final norm's op.
    expect(
      first
        .filter((s) => s.member)
        .map((s) => s.member)
        .sort(),
    ).toEqual([...layers].sort());
    expect(first.length).toBe(layers.length + 1);
    let shown: string[] = [];
    const visited: string[] = [];
    for (let current = 0; current < first.length; current += 1) {
      const stops = searchStops(index, view(shown), hits);
      expect(stops.map((s) => s.key)).toEqual(first.map((s) => s.key)); // the count never jumps
      const stop = stops[current];
      shown = stop.member ? [stop.member] : []; // what fold_control unfolds for it
      const now = searchStops(index, view(shown), hits)[current];
      expect(now.key).toBe(stop.key);
      if (now.member) expect(now.element).toBe(now.member); // drawn on its own, not folded
      visited.push(now.key);
    }
    expect(new Set(visited).size).toBe(first.length);
  });
});
