// The inspector of a folded run whose blocks are hidden in a collapsed layer (describe_run.ts):
// nothing of the run is drawn, so it offers neither to unfold it nor to fold it "again".
// The layers come from the JSON (the decoder stack's parent).
import { describe, expect, it } from "vitest";
import { inspect } from "./describe";
import { foldRuns } from "./folding";
import { buildIndex } from "./graph_index";
import { groupNamed, indexedGroups, repeatFixture } from "./repeat_fixtures";
import { buildVisibleGraph } from "./visible";

describe("a run inside a collapsed layer", () => {
  it("offers no fold action: none of its blocks is drawn on its own", () => {
    const graph = repeatFixture("llama_tiny");
    const index = buildIndex(graph);
    const layers = indexedGroups(graph, "model.layers");
    const runId = `${layers[0]}..${layers[3]}`;
    const state = { on: true, unfolded: new Set<string>() };
    for (const closed of ["model.layers", "model", "LlamaForCausalLM"]) {
      // Every group open but `closed` and what is inside it.
      const shut = groupNamed(graph, closed).id;
      const inside = (g: string | null | undefined): boolean => {
        for (let cur = g ?? null; cur; cur = index.groups.get(cur)?.parent ?? null) if (cur === shut) return true;
        return false;
      };
      const open = new Set(graph.groups.filter((g) => !inside(g.id)).map((g) => g.id));
      const vg = buildVisibleGraph(index, open, foldRuns(index, open, state));
      expect(layers.some((l) => vg.nodeById.has(l))).toBe(false); // no block drawn alone
      const actions = (inspect(index, vg, runId)?.sections ?? []).flatMap((s) => s.items).map((i) => i.action);
      expect(actions.filter(Boolean)).toEqual([]);
    }
  });
});
