// Enter in the search box selects the current match, as a click on it selects (search.ts
// enterMatch): a layer drawn closed or as a cluster selects its group, a node or edge itself;
// once selected, Enter goes on to the next match and selects it; Shift+Enter steps back.
// Expected ids come from the JSON (groups by name, nodes by their parameter).
import { describe, expect, it } from "vitest";
import { groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import { enterMatch, searchGraph, searchStops } from "./search";
import { fixture } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

describe("Enter on search matches", () => {
  const graph = fixture("lenet");
  const index = buildIndex(graph);

  it("selects a closed layer's group, then steps on through every match and round", () => {
    // Every layer open but the Linear ones: each is drawn closed, a node of its own.
    const vg = buildVisibleGraph(index, new Set(graph.groups.filter((g) => g.type !== "Linear").map((g) => g.id)));
    const stops = searchStops(index, vg, searchGraph(index, "Linear"));
    const search = { matches: stops, current: 0 };
    const picked: string[] = [];
    let selected = "";
    for (let i = 0; i <= stops.length; i += 1) {
      selected = enterMatch(index, search, selected, 1) as string;
      picked.push(selected);
    }
    const linear = graph.groups.filter((g) => g.type === "Linear").map((g) => g.id);
    expect([...picked.slice(0, -1)].sort()).toEqual([...linear].sort());
    expect(picked[stops.length]).toBe(picked[0]); // round to the first
  });

  it("selects the current match first; Shift+Enter steps back, selecting", () => {
    const open = new Set(groupsToDepth(index, index.maxLevel + 1, true));
    const vg = buildVisibleGraph(index, open);
    const weights = graph.nodes.filter((n) => n.param?.name.includes("weight")).map((n) => n.id);
    const search = { matches: searchStops(index, vg, searchGraph(index, "weight")), current: 0 };
    const n = search.matches.length;
    expect(n).toBe(weights.length);
    const first = enterMatch(index, search, "", 1);
    expect(search.current).toBe(0); // not selected yet: selected where it is
    expect(first).toBe(weights[0]);
    const back = enterMatch(index, search, first as string, -1);
    expect(search.current).toBe(n - 1);
    expect(back).toBe(weights[n - 1]);
    expect(enterMatch(index, search, "", -1)).toBe(weights[n - 2]); // Shift+Enter always steps
    expect(enterMatch(index, { matches: [], current: 0 }, "", 1)).toBeNull();
  });
});
