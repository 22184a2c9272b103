// The inspector and tooltips read forward: forward op names, ends in the forward direction
// (an op's inputs are what its GradNode sends gradients to), and "tensor" where the backward
// reading says "gradient". Checked against the JSON edges of the real LeNet/ResNet-18 graphs.
import { describe, expect, it } from "vitest";
import { edgeTooltip, inspect, inspectEdge, inspectGroup, inspectNode, nodeTooltip } from "./describe";
import { groupsToDepth } from "./expansion";
import { formatShape } from "./format";
import { buildIndex } from "./graph_index";
import { fixture } from "./test_fixtures";
import type { GraphPayload } from "./types";
import { buildVisibleGraph } from "./visible";

/** A MatmulGradNode and the parameter (weight) it sends a gradient to, from the JSON. */
function matmulAndWeight(graph: GraphPayload) {
  const params = new Map(graph.nodes.filter((n) => n.kind === "param").map((n) => [n.id, n] as const));
  for (const e of graph.edges) {
    const source = graph.nodes.find((n) => n.id === e.source);
    if (source?.name === "MatmulGradNode" && params.has(e.target))
      return { op: source, param: params.get(e.target)!, edge: e };
  }
  throw new Error("no matmul with a weight");
}

const items = (sections: { title: string; items: { label: string; ref?: string; value: string }[] }[], title: string) =>
  sections.find((s) => s.title === title)?.items ?? [];

describe("a node read forward", () => {
  const graph = fixture("lenet");
  const index = buildIndex(graph);
  const { op, param } = matmulAndWeight(graph);

  it("is titled by its forward op, with its GradNode's name kept in the subtitle", () => {
    const fwd = inspectNode(index, op.id, "forward");
    expect(fwd?.title).toBe("matmul");
    expect(fwd?.subtitle).toContain("MatmulGradNode");
    expect(inspectNode(index, op.id)?.title).toBe("MatmulGradNode");
    expect(nodeTooltip(index, buildVisibleGraph(index, new Set()), op.id, "forward")[0]).toBe(
      "matmul (MatmulGradNode)",
    );
  });

  it("lists its inputs (parameters among them) as where it comes from, the ops using it as where it goes", () => {
    const neighbours = items(inspectNode(index, op.id, "forward")?.sections ?? [], "Neighbours");
    const from = neighbours
      .filter((i) => i.label.includes("from"))
      .map((i) => i.ref)
      .sort();
    const to = neighbours
      .filter((i) => i.label.includes("to"))
      .map((i) => i.ref)
      .sort();
    expect(from).toEqual(
      graph.edges
        .filter((e) => e.source === op.id)
        .map((e) => e.target)
        .sort(),
    );
    expect(to).toEqual(
      graph.edges
        .filter((e) => e.target === op.id)
        .map((e) => e.source)
        .sort(),
    );
    expect(from).toContain(param.id);
    // Read backward: the other way round.
    const back = items(inspectNode(index, op.id)?.sections ?? [], "Neighbours");
    expect(
      back
        .filter((i) => i.label.includes("from"))
        .map((i) => i.ref)
        .sort(),
    ).toEqual(to);
  });
});

describe("an edge read forward", () => {
  const graph = fixture("lenet");
  const index = buildIndex(graph);
  const open = buildVisibleGraph(index, new Set(index.groups.keys()));
  const { op, param, edge } = matmulAndWeight(graph);

  it("runs from the parameter into the op, and carries a tensor of the gradient's shape", () => {
    const fwd = inspectEdge(index, open, edge.id, "forward");
    expect(fwd?.title).toBe(`${param.param?.name} \u2192 matmul`);
    expect(fwd?.subtitle).toBe(`tensor edge \u00b7 ${edge.id}`);
    expect(items(fwd?.sections ?? [], "Ends").map((i) => i.ref)).toEqual([param.id, op.id]);
    const shape = items(fwd?.sections ?? [], "Tensor").find((i) => i.label === "shape")?.value;
    expect(shape).toBe(formatShape(param.param?.shape ?? null));
    expect(fwd?.sections.map((s) => s.title)).not.toContain("Gradient");
    expect(inspectEdge(index, open, edge.id)?.subtitle).toBe(`gradient edge \u00b7 ${edge.id}`);
  });

  it("says tensor in its tooltip, and so for an edge whose tensor is unknown", () => {
    const ve = open.edgeById.get(edge.id)!;
    const lines = edgeTooltip(index, ve, "forward");
    expect(lines[0]).toBe(`${param.param?.name} \u2192 matmul`);
    expect(lines[1]).toBe(
      `dtype float32 \u00b7 shape ${formatShape(param.param?.shape ?? null)} \u00b7 place ${edge.grad?.place}`,
    );
    const bare = { ...ve, edges: [{ ...edge, grad: null }] };
    expect(edgeTooltip(index, bare, "forward")[1]).toBe("tensor: unknown");
    expect(edgeTooltip(index, bare)[1]).toBe("gradient: unknown");
  });

  it("counts the tensors a merged edge stands for", () => {
    const resnet = buildIndex(fixture("resnet18")); // its residual blocks, closed, merge edges
    const collapsed = buildVisibleGraph(resnet, new Set(groupsToDepth(resnet, 1)));
    const merged = collapsed.edges.find((ve) => ve.edges.length > 1);
    expect(merged).toBeDefined();
    const n = merged!.edges.length;
    expect(edgeTooltip(resnet, merged!, "forward")[0]).toContain(`${n} tensors cross`);
    expect(edgeTooltip(resnet, merged!)[0]).toContain(`${n} gradients cross`);
    expect(inspect(resnet, collapsed, merged!.id, "forward")?.subtitle).toBe(`${n} tensors merged`);
    // Its ends are drawn the other way: the forward tail is the backward head.
    const ends = items(inspect(resnet, collapsed, merged!.id, "forward")?.sections ?? [], "Ends").map((i) => i.ref);
    expect(ends).toEqual([merged!.target, merged!.source]);
  });
});

describe("a layer read forward", () => {
  const graph = fixture("resnet18");
  const index = buildIndex(graph);

  it("has tensors coming in where the gradients went out, and the other way round", () => {
    const layer = graph.groups.find((g) => g.name === "layer2.0")!;
    const fwd = inspectGroup(index, layer.id, "forward")?.sections ?? [];
    const bwd = inspectGroup(index, layer.id)?.sections ?? [];
    const values = (list: { value: string }[]) => list.map((i) => i.value);
    expect(values(items(fwd, "Tensors in"))).toEqual(values(items(bwd, "Gradients out")));
    expect(values(items(fwd, "Tensors out"))).toEqual(values(items(bwd, "Gradients in")));
    // The tensor into layer2.0 is layer1's output: 64 channels, from outside the layer.
    expect(values(items(fwd, "Tensors in")).join(" ")).toMatch(/\[\d+, 64, /);
  });
});
