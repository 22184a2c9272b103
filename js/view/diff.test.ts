import { describe, expect, it } from "vitest";
import {
  changeLabel,
  changeValue,
  diffInfo,
  diffMarking,
  diffOverview,
  diffSections,
  diffTooltip,
  mergedStatus,
  tallyText,
} from "./diff";
import { visibleGraphToDot } from "./dot";
import { buildIndex } from "./graph_index";
import { decodePayload, PayloadError } from "./payload";
import { chainFromJson, document, fixture } from "./test_fixtures";
import type { DiffMark, GraphPayload } from "./types";
import { buildVisibleGraph } from "./visible";

const SHAPE: DiffMark = {
  status: "changed",
  changes: [{ field: "shape", of: "outputs.grad_x", a: [2, 16], b: [2, 32] }],
};

/** The LeNet fixture as a diff: the first op added, the second changed, the last parameter
 * removed, one edge changed in norm and one added; labels "fp32" and "amp". */
function asDiff(): { graph: GraphPayload; added: string; changed: string; removed: string; edge: string } {
  const graph = fixture("lenet");
  const ops = graph.nodes.filter((n) => n.kind === "op");
  const params = graph.nodes.filter((n) => n.kind === "param");
  ops[0].diff = { status: "added", changes: [] };
  ops[1].diff = SHAPE;
  params[params.length - 1].diff = { status: "removed", changes: [] };
  graph.edges[1].diff = { status: "changed", changes: [{ field: "norm", a: 1.23456, b: 4.5 }] };
  graph.edges[2].diff = { status: "added", changes: [] };
  graph.meta = {
    ...graph.meta,
    diff: { labels: ["fp32", "amp"], rtol: 0.1, counts: {}, compared: ["shape", "stats"] },
  };
  return {
    graph,
    added: ops[0].id,
    changed: ops[1].id,
    removed: params[params.length - 1].id,
    edge: graph.edges[1].id,
  };
}

describe("schema 2.2 diff marks in the payload", () => {
  it("reads a node's and an edge's diff and rejects a malformed one", () => {
    const doc = document("lenet") as { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] };
    doc.nodes[0].diff = { status: "changed", changes: [{ field: "dtype", of: "param", a: "float32", b: "float16" }] };
    doc.edges[0].diff = { status: "removed" };
    const payload = decodePayload(doc);
    expect(payload.nodes[0].diff).toEqual(doc.nodes[0].diff);
    expect(payload.edges[0].diff).toEqual({ status: "removed", changes: [] });
    expect(payload.nodes[1].diff).toBeUndefined();
    doc.edges[0].diff = { status: "moved" };
    expect(() => decodePayload(doc)).toThrow(PayloadError);
    expect(() => decodePayload(doc)).toThrow(/edge e0: diff is not/);
  });
});

describe("diff marks in the view", () => {
  it("is off for a graph that is not a diff", () => {
    expect(diffInfo(fixture("lenet"))).toBeNull();
    expect(diffInfo(asDiff().graph)?.labels).toEqual(["fp32", "amp"]);
  });

  it("classes every marked node and edge with its status in the DOT, and only those", () => {
    const { graph, added, changed, removed, edge } = asDiff();
    const index = buildIndex(graph);
    const vg = buildVisibleGraph(index, new Set(graph.groups.map((g) => g.id)));
    const dot = visibleGraphToDot(index, vg, { rankdir: "TB", edgeLabels: false, diff: diffMarking(index) });
    const classOf = (id: string): string => new RegExp(`"pvw-${id}" class="([^"]*)"`).exec(dot)?.[1] ?? "";
    expect(classOf(added)).toContain("pvw-diff-added");
    expect(classOf(changed)).toContain("pvw-diff-changed");
    expect(classOf(removed)).toContain("pvw-diff-removed");
    expect(classOf(edge)).toContain("pvw-diff-changed");
    expect(classOf(graph.edges[2].id)).toContain("pvw-diff-added");
    expect(dot.match(/pvw-diff-/g)).toHaveLength(5);
  });

  it("gives a collapsed layer the count of the marks inside it, counted from the JSON", () => {
    const { graph } = asDiff();
    const index = buildIndex(graph);
    const vg = buildVisibleGraph(index, new Set());
    const marking = diffMarking(index);
    for (const vn of vg.nodes.filter((n) => n.group && n.calls === 1)) {
      const inside = graph.nodes.filter((n) => chainFromJson(graph, n.id).includes(vn.group!.id));
      const ids = new Set(inside.map((n) => n.id));
      const marks = [...inside, ...graph.edges.filter((e) => ids.has(e.source))].flatMap((x) =>
        x.diff ? [x.diff.status] : [],
      );
      const expected = tallyText({
        added: marks.filter((m) => m === "added").length,
        removed: marks.filter((m) => m === "removed").length,
        changed: marks.filter((m) => m === "changed").length,
      });
      expect(marking.groupLine(vn)).toBe(expected ? `\u0394 ${expected}` : null);
      // Added or removed only when every node inside is (the layer is only in one graph).
      const first = inside[0]?.diff?.status;
      const whole = first !== "changed" && inside.every((n) => n.diff?.status === first) ? first : "changed";
      expect(marking.nodeClass(vn)).toBe(expected ? `pvw-diff-holds pvw-diff-${whole}` : null);
    }
    const dot = visibleGraphToDot(index, vg, { rankdir: "TB", edgeLabels: false, diff: marking });
    expect(dot).toContain("\u0394 ");
  });

  it("marks a merged edge by the one status its gradients share, else changed", () => {
    const e = (status?: DiffMark["status"]) => ({
      id: "e",
      source: "a",
      target: "b",
      grad: null,
      ...(status ? { diff: { status, changes: [] } } : {}),
    });
    expect(mergedStatus([e(), e()])).toBeNull();
    expect(mergedStatus([e("added"), e("added")])).toBe("added");
    expect(mergedStatus([e("removed"), e()])).toBe("changed");
  });

  it("words a change as where, what, and the value in a then in b", () => {
    expect(changeLabel(SHAPE.changes[0])).toBe("output grad_x shape");
    expect(changeValue(SHAPE.changes[0])).toBe("[2, 16] \u2192 [2, 32]");
    expect(changeLabel({ field: "dtype", of: "param", a: "float32", b: "float16" })).toBe("param dtype");
    expect(changeValue({ field: "norm", a: 1.23456, b: 4.5 })).toBe("1.23 \u2192 4.5");
    expect(changeValue({ field: "grad_status", of: "param", a: null, b: "zero" })).toBe("normal \u2192 zero");
    expect(changeValue({ field: "slots", of: "inputs", a: ["x"], b: ["x", "y"] })).toBe("x \u2192 x, y");
    // diff(a, b, rtol=1e-4) flags a 1.5e-4 move: it must not read "1.23 → 1.23".
    expect(changeValue({ field: "norm", a: 1.23451, b: 1.23469 })).toBe("1.2345 \u2192 1.2347");
    expect(changeValue({ field: "max_abs", a: 2.5e-7, b: 2.5000001e-7 })).toBe("2.5e-7 \u2192 2.5000001e-7");
  });
});

describe("diff in the inspector", () => {
  it("puts a selected node's changes first, and says when it is the same", () => {
    const { graph, changed, removed } = asDiff();
    const index = buildIndex(graph);
    const info = diffInfo(graph)!;
    const [section] = diffSections(index, changed, undefined, info);
    expect(section.title).toBe("Difference fp32 \u2192 amp");
    expect(section.items.map((i) => [i.label, i.value])).toEqual([
      ["status", "changed from fp32 to amp"],
      ["change", "output grad_x shape: [2, 16] \u2192 [2, 32]"],
      ["shown", "amp's values"],
    ]);
    expect(diffSections(index, removed, undefined, info)[0].items[0].value).toBe("only in fp32 (removed)");
    const same = graph.nodes.find((n) => !n.diff)!;
    expect(diffSections(index, same.id, undefined, info)[0].items).toEqual([
      { label: "status", value: "the same in both" },
    ]);
    expect(diffTooltip(index, [changed], info)).toEqual([
      "changed from fp32 to amp \u00b7 output grad_x shape [2, 16] \u2192 [2, 32]",
    ]);
  });

  it("summarises the diff with nothing selected: counts, then entries that select their item", () => {
    const { graph, added, changed, removed, edge } = asDiff();
    const index = buildIndex(graph);
    const overview = diffOverview(index, diffInfo(graph)!);
    expect(overview.title).toBe("Differences fp32 \u2192 amp");
    const counts = Object.fromEntries(overview.sections[0].items.map((i) => [i.label, i.value]));
    expect(counts).toMatchObject({
      added: "1 node \u00b7 1 edge",
      removed: "1 node \u00b7 0 edges",
      changed: "1 node \u00b7 1 edge",
    });
    const refs = overview.sections.slice(1).map((s) => [s.title, s.items.map((i) => i.ref)]);
    expect(refs).toEqual([
      ["Added (2)", [added, graph.edges[2].id]],
      ["Removed (1)", [removed]],
      ["Changed (2)", [changed, edge]],
    ]);
  });
});
