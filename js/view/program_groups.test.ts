import { describe, expect, it } from "vitest";
import programJson from "../../tests/fixtures/graphs/mlp_to_static.json";
import { counts } from "./budget_text";
import { openToDepth } from "./auto_open";
import { groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import { decodePayload } from "./payload";
import { isProgramGroup } from "./program_groups";
import { buildVisibleGraph } from "./visible";

// A to_static MLP traced by the Python side (tests/test_program_view.py makes the same).
const graph = decodePayload(programJson);
const index = buildIndex(graph);
const program = graph.groups.find((g) => isProgramGroup(g));
const ops = graph.nodes.filter((n) => n.kind === "program_op");

describe("a to_static program group", () => {
  it("is in the document, with its ops and their edges' reason for no statistics", () => {
    expect(program).toBeDefined();
    expect(ops.map((n) => n.name).sort()).toEqual(["add_grad", "add_grad", "matmul_grad", "matmul_grad", "tanh_grad"]);
    const inside = graph.edges.filter((e) => e.id.startsWith(`${program!.id}_`));
    expect(inside.length).toBeGreaterThan(0);
    expect(inside.every((e) => (e.no_stats ?? "").startsWith("inside a compiled program"))).toBe(true);
  });

  it("stays closed at any depth, and shows its ops once opened", () => {
    const open = new Set(groupsToDepth(index, index.maxLevel + 1));
    expect(open.has(program!.id)).toBe(false);
    expect(new Set(openToDepth(index, -1).expanded).has(program!.id)).toBe(false);
    const closed = buildVisibleGraph(index, open);
    expect(closed.nodes.some((n) => n.id === program!.id && n.kind === "group")).toBe(true);
    expect(closed.nodes.some((n) => n.node?.kind === "program_op")).toBe(false);
    const opened = buildVisibleGraph(index, new Set([...open, program!.id]));
    const shown = opened.nodes.filter((n) => n.node?.kind === "program_op");
    expect(shown.length).toBe(ops.length);
    expect(shown.every((n) => n.kind === "op")).toBe(true); // drawn as ops
  });
});

describe("the status line of a graph with a program", () => {
  it("counts the program's ops apart from the GradNodes", () => {
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, index.maxLevel + 1)));
    expect(counts(index, vg)).toMatch(/^5 GradNodes \+ 5 program ops · /);
  });
});
