// Detection of repeated blocks (repeats.ts) on real Paddle models and on payloads changed in
// one place at a time. Expected runs come from the JSON (names, downsample branches,
// parameter shapes), not from the code under test.
import { describe, expect, it } from "vitest";
import { buildIndex } from "./graph_index";
import { findRepeats, findRepeatsInSlices, rangeName, repeatsInSlices, repeatsOf, splitIndex } from "./repeats";
import { groupNamed, indexedGroups, repeatFixture } from "./repeat_fixtures";
import { rng, synthetic } from "./test_fixtures";
import type { GraphPayload } from "./types";

const runsOf = (graph: GraphPayload): string[][] => findRepeats(buildIndex(graph)).runs.map((r) => [...r.members]);

describe("repeated blocks in real models", () => {
  it("paddleformers' Llama: every decoder layer, model.layers.0-3, in one run", () => {
    const graph = repeatFixture("llama_tiny");
    const layers = indexedGroups(graph, "model.layers");
    expect(layers.length).toBe(4);
    const repeats = findRepeats(buildIndex(graph));
    expect(repeats.runs.map((r) => r.members)).toEqual([layers]);
    const run = repeats.runs[0];
    expect(run).toMatchObject({ prefix: "model.layers", start: 0, type: "LlamaDecoderLayer" });
    expect(run.parent).toBe(groupNamed(graph, "model.layers").id);
    expect(run.id).toBe(`${layers[0]}..${layers[3]}`);
    expect(rangeName(run, 0, 3)).toBe("model.layers.0\u20133");
    expect(repeats.runOf(layers[2])).toBe(run);
    expect(repeats.runsIn(run.parent)).toEqual([run]);
  });

  it("ResNet-50: a stage's first block has a downsample branch and stays out of the run of the others", () => {
    const graph = repeatFixture("resnet50");
    const expected: string[][] = [];
    for (const stage of ["layer1", "layer2", "layer3", "layer4"]) {
      const blocks = indexedGroups(graph, stage);
      const plain = blocks.filter((id) => {
        const name = graph.groups.find((g) => g.id === id)?.name;
        return !graph.groups.some((g) => g.name === `${name}.downsample`);
      });
      // What Paddle's ResNet-50 does: only each stage's block 0 changes the width.
      expect(plain).toEqual(blocks.slice(1));
      expected.push(plain);
    }
    expect(expected.map((r) => r.length)).toEqual([2, 3, 5, 2]);
    expect(runsOf(graph)).toEqual(expected);
  });

  it("ResNet-18: layer1.0-1 fold (neither downsamples); later stages keep one plain block each", () => {
    const graph = repeatFixture("resnet18");
    const layer1 = indexedGroups(graph, "layer1");
    expect(graph.groups.some((g) => g.name.startsWith("layer1.") && g.name.endsWith(".downsample"))).toBe(false);
    expect(graph.groups.some((g) => g.name === "layer2.0.downsample")).toBe(true);
    expect(runsOf(graph)).toEqual([layer1]);
  });

  it("blocks that differ from their neighbours in one parameter's shape do not fold with them", () => {
    const graph = repeatFixture("uneven");
    const shapes = indexedGroups(graph, "blocks").map((id) => {
      const name = `${graph.groups.find((g) => g.id === id)?.name}.scale`;
      return JSON.stringify(graph.nodes.find((n) => n.param?.name === name)?.param?.shape);
    });
    expect(shapes).toEqual(["[8]", "[8]", "[1]", "[8]", "[8]"]);
    const blocks = indexedGroups(graph, "blocks");
    expect(runsOf(graph)).toEqual([blocks.slice(0, 2), blocks.slice(3)]);
  });

  it("LeNet has none; nor has the nested model, whose two blocks lie in separate parts of their list", () => {
    expect(runsOf(repeatFixture("lenet"))).toEqual([]);
    const nested = repeatFixture("nested");
    const index = buildIndex(nested);
    expect(index.calls(groupNamed(nested, "blocks").id).length).toBe(2); // a shared Tanh between
    expect(runsOf(nested)).toEqual([]);
  });
});

describe("what makes two blocks the same", () => {
  // synthetic(4, 2, 3): blocks.0-3, each one op and two sub-layers of three chained ops.
  const base = (): GraphPayload => synthetic(4, 2, 3);
  const blocks = (graph: GraphPayload): string[] => indexedGroups(graph, "blocks");
  const nodesOf = (graph: GraphPayload, gid: string): GraphPayload["nodes"] =>
    graph.nodes.filter((n) => n.group === gid || graph.groups.find((g) => g.id === n.group)?.parent === gid);

  it("identical blocks named blocks.0, blocks.1, ... are one run", () => {
    const graph = base();
    expect(runsOf(graph)).toEqual([blocks(graph)]);
  });

  it("names must count up by one from the same prefix", () => {
    const renamed = base();
    renamed.groups.find((g) => g.name === "blocks.2")!.name = "blocks.x";
    const b = blocks(base());
    expect(runsOf(renamed)).toEqual([b.slice(0, 2)]);
    const skipped = base();
    skipped.groups.find((g) => g.name === "blocks.2")!.name = "blocks.5";
    expect(runsOf(skipped)).toEqual([b.slice(0, 2)]);
  });

  it("a different type, op, sub-layer name or edge inside a block sets it apart", () => {
    const b = blocks(base());
    const typed = base();
    typed.groups.find((g) => g.name === "blocks.3")!.type = "Other";
    expect(runsOf(typed)).toEqual([b.slice(0, 3)]);

    const op = base();
    nodesOf(op, b[1])[2].name = "MultiplyGradNode";
    expect(runsOf(op)).toEqual([b.slice(2)]);

    const sub = base();
    sub.groups.find((g) => g.name === "blocks.1.s0")!.name = "blocks.1.t0";
    expect(runsOf(sub)).toEqual([b.slice(2)]);

    const edge = base();
    const [first, , third] = nodesOf(edge, b[2]);
    edge.edges.push({ id: "e_extra", source: first.id, target: third.id, grad: null });
    expect(runsOf(edge)).toEqual([b.slice(0, 2)]);
  });

  it("parameter shapes must match", () => {
    const graph = base();
    blocks(graph).forEach((gid, k) => {
      const op = nodesOf(graph, gid)[0];
      const id = `p${k}`;
      graph.nodes.push({
        id,
        name: "GradNodeAccumulation",
        ptr: "0x0",
        kind: "param",
        group: gid,
        param: { name: `blocks.${k}.w`, shape: [k === 1 ? 5 : 4], dtype: "float32" },
      });
      graph.edges.push({
        id: `ep${k}`,
        source: op.id,
        target: id,
        index: 1,
        grad: { dtype: "float32", shape: [4], place: "cpu" },
      });
    });
    const b = blocks(graph);
    expect(runsOf(graph)).toEqual([b.slice(2)]);
  });

  it("a block drawn in two parts (used twice, or not connected) does not fold", () => {
    const graph = base();
    const b = blocks(graph);
    const [own, firstOfSub] = nodesOf(graph, b[3]);
    graph.edges = graph.edges.filter((e) => !(e.source === own.id && e.target === firstOfSub.id));
    expect(buildIndex(graph).calls(b[3]).length).toBe(2);
    expect(runsOf(graph)).toEqual([b.slice(0, 3)]);
  });

  it("does not depend on where the payload puts the nodes and edges", () => {
    const random = rng(3);
    const shuffle = <T>(list: T[]): T[] => {
      for (let i = list.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [list[i], list[j]] = [list[j], list[i]];
      }
      return list;
    };
    for (const name of ["llama_tiny", "resnet50", "uneven"]) {
      const graph = repeatFixture(name);
      const expected = runsOf(graph);
      for (let k = 0; k < 3; k++) {
        const moved = { ...graph, nodes: shuffle([...graph.nodes]), edges: shuffle([...graph.edges]) };
        expect(runsOf(moved)).toEqual(expected);
      }
    }
  });
});

describe("finding runs over several tasks", () => {
  it("slices of no time at all stop at every block and find the runs findRepeats finds", () => {
    for (const graph of [repeatFixture("resnet50"), repeatFixture("llama_tiny"), synthetic(6, 2, 3)]) {
      const steps = findRepeatsInSlices(buildIndex(graph), 0);
      let slices = 0;
      let step = steps.next();
      for (; !step.done; step = steps.next()) slices += 1;
      expect(slices).toBeGreaterThan(3);
      expect(step.value.runs).toEqual(findRepeats(buildIndex(graph)).runs);
    }
  });

  it("what the slices find is what repeatsOf answers for that index, without finding it again", () => {
    const index = buildIndex(repeatFixture("resnet50"));
    const steps = repeatsInSlices(index, 0);
    let step = steps.next();
    while (!step.done) step = steps.next();
    expect(repeatsOf(index)).toBe(step.value);
    expect(repeatsInSlices(index, 0).next()).toEqual({ done: true, value: step.value });
  });
});

describe("splitIndex", () => {
  it("splits the index that ends a layer path", () => {
    expect(splitIndex("model.layers.12")).toEqual(["model.layers", 12]);
    expect(splitIndex("3")).toEqual(["", 3]);
    for (const name of ["conv1", "layers.01", "layers.", "layers.-1", "layers.1e3", ""])
      expect(splitIndex(name)).toBeNull();
  });
});
