import { Graphviz } from "@hpcc-js/wasm";
import { describe, expect, it } from "vitest";
import trainDoc from "../../tests/fixtures/jittor/simple_model_train.graph.json";
import { SLOTS_HINT, inspect, nodeTooltip } from "./describe";
import { elementId, visibleGraphToDot } from "./dot";
import { groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import { jittorFacts, jittorSections, shortJitKey } from "./jittor";
import { decodePayload } from "./payload";
import { FIXTURES } from "./test_fixtures";
import type { GraphPayload } from "./types";
import { buildVisibleGraph } from "./visible";

// The document paddleviz_widget/sources/jittor.py writes for the hand-made training trace
// (tests/fixtures/jittor/make_fixtures.py); a Python test keeps it in step with the source.
const graph = decodePayload(trainDoc);
const index = buildIndex(graph);
const open = buildVisibleGraph(index, new Set(index.groups.keys()));
const meta = graph.meta as {
  jittor: { grad_of: Record<string, string>; executions: { jit_key: string; ops: string[] }[] };
};
const text = (x: unknown): string => JSON.stringify(x);
const title = (id: string): string => index.nodes.get(id)?.name ?? id;

function section(id: string, name: string) {
  return inspect(index, open, id)?.sections.find((s) => s.title === name);
}

describe("Jittor facts in the inspector", () => {
  it("links every backward op to the forward op it differentiates, both ways", () => {
    const pairs = Object.entries(meta.jittor.grad_of);
    expect(pairs.length).toBeGreaterThan(5);
    for (const [bwd, fwd] of pairs) {
      const items = section(bwd, "Gradient")?.items ?? [];
      expect(items[0]).toMatchObject({ label: "backward of", ref: fwd, value: title(fwd) });
      const back = section(fwd, "Gradient")?.items ?? [];
      expect(back.map((i) => i.ref)).toContain(bwd);
      expect(nodeTooltip(index, open, bwd)).toContain(`backward of ${title(fwd)} (${fwd})`);
    }
    const forwardOnly = graph.nodes.filter(
      (n) => !(n.id in meta.jittor.grad_of) && !Object.values(meta.jittor.grad_of).includes(n.id),
    );
    for (const n of forwardOnly) expect(section(n.id, "Gradient")).toBeUndefined();
  });

  it("says which fused groups an op ran in, with how many ops, and links the others", () => {
    let fusedSeen = 0;
    for (const n of graph.nodes) {
      const runs = meta.jittor.executions.filter((e) => e.ops.includes(n.id));
      const items = section(n.id, "Execution")?.items ?? [];
      const heads = items.filter((i) => i.label === "fused in" || i.label === "ran as");
      expect(heads.length).toBe(runs.length);
      runs.forEach((run, k) => {
        expect(heads[k].value).toBe(
          `${shortJitKey(run.jit_key)} with ${run.ops.length} op${run.ops.length === 1 ? "" : "s"}`,
        );
        expect(heads[k].label).toBe(run.ops.length > 1 ? "fused in" : "ran as");
        expect(heads[k].hint).toContain(run.jit_key);
        if (run.ops.length > 1) fusedSeen++;
      });
      const peers = new Set(runs.flatMap((r) => r.ops).filter((op) => op !== n.id));
      expect(new Set(items.filter((i) => i.label === "with").map((i) => i.ref))).toEqual(peers);
    }
    expect(fusedSeen).toBeGreaterThan(10);
    // the fixture runs one broadcast_to in two fused groups
    expect(
      graph.nodes.some(
        (n) => (section(n.id, "Execution")?.items ?? []).filter((i) => i.label === "fused in").length === 2,
      ),
    ).toBe(true);
  });

  it("titles slots as plain inputs/outputs and gives no tracing hint", () => {
    const op = graph.nodes.find((n) => n.kind === "op" && (n.inputs?.length ?? 0) > 0) as GraphPayload["nodes"][number];
    const info = inspect(index, open, op.id);
    expect(info?.sections.map((s) => s.title)).toContain("Inputs");
    expect(text(info)).not.toContain("Backward inputs");
    for (const n of graph.nodes) expect(text(inspect(index, open, n.id))).not.toContain(SLOTS_HINT);
  });

  it("adds nothing to graphs that did not come from Jittor", () => {
    for (const g of Object.values(FIXTURES)) {
      expect(jittorFacts(g)).toBeNull();
      for (const n of g.nodes.slice(0, 20)) expect(jittorSections(g, n.id, (id) => id)).toEqual([]);
    }
  });

  it("skips meta.jittor entries that are not in its shape", () => {
    const odd: GraphPayload = {
      ...graph,
      meta: {
        source: "jittor",
        jittor: { grad_of: { n1: 7, n2: "n3" }, executions: [null, { ops: "n1" }, { ops: ["n1", 4], jit_key: 5 }] },
      },
    };
    const facts = jittorFacts(odd);
    expect([...(facts?.gradOf.entries() ?? [])]).toEqual([["n2", "n3"]]);
    expect(facts?.runs.get("n1")).toEqual([{ key: -1, jit_key: "", ops: ["n1"] }]);
    expect(shortJitKey("")).toBe("(no jit key)");
    expect(shortJitKey("x".repeat(60)).length).toBe(48);
  });
});

describe("a Jittor graph in the view", () => {
  it.each([0, 1, 99])("lays out with Graphviz at depth %i, every visible node drawn", async (depth) => {
    const graphviz = (await Graphviz.load()) as unknown as { layout(dot: string, f: string, e: string): string };
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, depth)));
    const svg = graphviz.layout(visibleGraphToDot(index, vg), "svg", "dot");
    const drawn = [...svg.matchAll(/<g id="([^"]+)" class="node/g)].map((m) => m[1].replace(/&#45;/g, "-"));
    expect(drawn.sort()).toEqual(vg.nodes.map((n) => elementId(n.id)).sort());
    if (depth === 99) expect(vg.nodes.length).toBe(graph.nodes.length);
    else expect(vg.nodes.length).toBeLessThan(graph.nodes.length);
  });
});
