// Every difference of a diff is reachable: the overview lists them all (it listed 8 per
// status: a user with 40 changed layers could not reach the rest), and ‹ › / n p step through
// each one once, in the graph's order. Marks set on ResNet-50's own graph (JSON fixture).
import { describe, expect, it } from "vitest";
import { diffInfo, diffOverview, diffSections, LIST_LIMIT, pathInA } from "./diff";
import { diffKey, diffOrder, stepFrom } from "./diff_steps";
import { buildIndex } from "./graph_index";
import { repeatFixture } from "./repeat_fixtures";
import type { GraphPayload } from "./types";

const META = { labels: ["a", "b"], rtol: 0.1, counts: {}, compared: ["shape"] };

/** ResNet-50 with its first `n` weights' nodes changed and every edge into them too. */
function marked(n: number): { graph: GraphPayload; nodes: string[]; edges: string[] } {
  const graph = repeatFixture("resnet50");
  const params = graph.nodes.filter((x) => x.kind === "param").slice(0, n);
  expect(params).toHaveLength(n);
  const ids = new Set(params.map((p) => p.id));
  for (const p of params) p.diff = { status: "changed", changes: [] };
  const edges = graph.edges.filter((e) => ids.has(e.target));
  for (const e of edges) e.diff = { status: "added", changes: [] };
  graph.meta = { ...graph.meta, diff: META };
  return { graph, nodes: [...ids], edges: edges.map((e) => e.id) };
}

describe("the differences overview", () => {
  it("lists every one of 40 changed parameters and the edges into them", () => {
    const { graph, nodes, edges } = marked(40);
    const sections = diffOverview(buildIndex(graph), diffInfo(graph)!).sections;
    const refs = (title: string): string[] =>
      (sections.find((s) => s.title.startsWith(title))?.items ?? []).flatMap((i) => (i.ref ? [i.ref] : []));
    expect(new Set(refs("Changed (40)"))).toEqual(new Set(nodes));
    expect(new Set(refs(`Added (${edges.length})`))).toEqual(new Set(edges));
  });

  it("past its limit says how many more and how to reach them", () => {
    const { graph } = marked(40);
    const extra = [...graph.nodes, ...graph.edges].filter((x) => !x.diff);
    for (const x of extra) x.diff = { status: "removed", changes: [] };
    expect(extra.length).toBeGreaterThan(LIST_LIMIT);
    const removed = diffOverview(buildIndex(graph), diffInfo(graph)!).sections.find((s) =>
      s.title.startsWith("Removed"),
    );
    expect(removed?.items.filter((i) => i.ref)).toHaveLength(LIST_LIMIT);
    const more = extra.length - LIST_LIMIT;
    expect(removed?.items[removed.items.length - 1]?.value).toBe(`${more} more: \u203a or n steps through every one`);
  });
});

describe("stepping through the differences", () => {
  it("visits every marked node and edge once, each node before the edges it sends", () => {
    const { graph, nodes, edges } = marked(40);
    const index = buildIndex(graph);
    const order = diffOrder(index);
    expect(order).toHaveLength(nodes.length + edges.length);
    expect(new Set(order)).toEqual(new Set([...nodes, ...edges]));
    const at = new Map(order.map((id, k) => [id, k]));
    for (const e of graph.edges)
      if (e.diff && index.nodes.get(e.source)?.diff) {
        expect(at.get(e.source)!).toBeLessThan(at.get(e.id)!);
      }
    // n from nothing selected walks them all and comes back round to the first
    let selected = "";
    const seen: string[] = [];
    for (let k = 0; k <= order.length; k += 1) {
      selected = order[stepFrom(at, order.length, selected, 1)];
      seen.push(selected);
    }
    expect(seen.slice(0, -1)).toEqual(order);
    expect(seen[seen.length - 1]).toBe(order[0]);
    // p from nothing selected is the last; from the first, round to the last
    expect(stepFrom(at, order.length, "", -1)).toBe(order.length - 1);
    expect(stepFrom(at, order.length, order[0], -1)).toBe(order.length - 1);
    expect(stepFrom(at, order.length, "not-a-difference", 1)).toBe(0);
    expect(stepFrom(new Map(), 0, "", 1)).toBe(-1);
  });

  it("takes n, p and N, and leaves the page its shortcuts with a modifier", () => {
    const key = (k: string, mod = false) => diffKey({ key: k, ctrlKey: mod, metaKey: false, altKey: false });
    expect([key("n"), key("p"), key("N"), key("n", true), key("j")]).toEqual([1, -1, -1, null, null]);
  });
});

describe("layers matched under another name (a layer inserted before them)", () => {
  it("lists them and names a node's layer as the first graph had it", () => {
    const { graph } = marked(1);
    const moved = [
      ["layer3.1", "layer3.2"],
      ["layer3.2", "layer3.3"],
    ];
    graph.meta = { ...graph.meta, diff: { ...META, labels: ["v1", "v2"], moved } };
    const info = diffInfo(graph)!;
    expect(pathInA(info, "layer3.2.conv1")).toBe("layer3.1.conv1");
    expect(pathInA(info, "layer3.3")).toBe("layer3.2");
    expect(pathInA(info, "layer3.20")).toBeNull(); // "layer3.2" is no prefix of it
    expect(pathInA(info, "layer3.1")).toBeNull(); // the one before the insertion kept its name
    const index = buildIndex(graph);
    const section = diffOverview(index, info).sections.find((s) => s.title.startsWith("Moved (2)"));
    expect(section?.items.map((i) => i.value)).toEqual(["layer3.1 \u2192 layer3.2", "layer3.2 \u2192 layer3.3"]);
    const inside = graph.nodes.find((n) => index.groups.get(n.group ?? "")?.name === "layer3.2.conv1")!;
    const items = diffSections(index, inside.id, undefined, info)[0].items;
    expect(items).toContainEqual(expect.objectContaining({ label: "in v1", value: "layer3.1.conv1" }));
    const before = graph.nodes.find((n) => index.groups.get(n.group ?? "")?.name === "layer3.1.conv1")!;
    expect(diffSections(index, before.id, undefined, info)[0].items.map((i) => i.label)).toEqual(["status"]);
  });
});
