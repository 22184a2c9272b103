import { describe, expect, it } from "vitest";
import { buildIndex, buildIndexSteps, groupStats, instanceId, parseInstanceId } from "./graph_index";
import { FIXTURE_NAMES, chainFromJson, fixture, levelFromJson, wrapperFromJson } from "./test_fixtures";
import type { GraphPayload } from "./types";

describe.each(FIXTURE_NAMES)("index of %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);

  it("is the same index built in steps, a step after the groups and every few nodes or edges", () => {
    const steps = buildIndexSteps(graph, 5);
    let count = 0;
    let next = steps.next();
    for (; !next.done; next = steps.next()) count += 1;
    expect(count).toBe(1 + Math.floor(index.nodes.size / 5) + Math.floor(index.edges.size / 5));
    const stepped = next.value;
    expect([...stepped.nodes.keys()]).toEqual([...index.nodes.keys()]);
    expect([...stepped.edges.keys()]).toEqual([...index.edges.keys()]);
    expect([...stepped.level]).toEqual([...index.level]);
    for (const id of index.groups.keys()) {
      expect(stepped.descendantNodes(id)).toEqual(index.descendantNodes(id));
      expect(stepped.calls(id)).toEqual(index.calls(id));
    }
    for (const id of index.nodes.keys()) expect(stepped.ancestors(id)).toEqual(index.ancestors(id));
  });

  it("looks every id up", () => {
    expect(index.nodes.size).toBe(graph.nodes.length);
    expect(index.edges.size).toBe(graph.edges.length);
    expect(index.groups.size).toBe(graph.groups.length);
  });

  it("follows the group parent links for ancestors and levels", () => {
    expect(graph.groups.length).toBeGreaterThan(0);
    for (const n of graph.nodes) expect(index.ancestors(n.id)).toEqual(chainFromJson(graph, n.id));
    for (const g of graph.groups) {
      expect(index.level.get(g.id)).toBe(levelFromJson(graph, g.id));
      expect(index.ancestors(g.id)[0] ?? null).toBe(g.parent);
    }
    expect(index.wrapper).toBe(wrapperFromJson(graph));
    expect(index.maxLevel).toBe(Math.max(...graph.groups.map((g) => index.level.get(g.id) ?? 0)));
  });

  it("lists each group's nodes at any depth", () => {
    for (const g of graph.groups) {
      const expected = graph.nodes.filter((n) => chainFromJson(graph, n.id).includes(g.id));
      expect(index.descendantNodes(g.id)).toEqual(expected.map((n) => n.id));
      expect(index.firstNode(g.id)).toBe(expected[0]?.id);
      const stats = groupStats(index, g.id);
      expect(stats.params).toBe(expected.filter((n) => n.kind === "param").length);
      expect(stats.ops + stats.params).toBe(expected.length);
    }
  });

  it("counts parameter values from the parameter shapes", () => {
    for (const g of graph.groups) {
      const params = graph.nodes.filter(
        (n) => n.kind === "param" && n.param && chainFromJson(graph, n.id).includes(g.id),
      );
      const values = params.reduce((acc, n) => acc + (n.param?.shape ?? []).reduce((a, d) => a * d, 1), 0);
      expect(groupStats(index, g.id).values).toBe(values);
    }
  });

  it("splits each group into connected parts, one per use of the layer", () => {
    for (const g of graph.groups) {
      const parts = index.calls(g.id);
      expect(parts.flat().sort()).toEqual([...index.descendantNodes(g.id)].sort());
      const partOf = new Map(parts.flatMap((p, k) => p.map((n) => [n, k] as const)));
      for (const e of graph.edges) {
        if (partOf.has(e.source) && partOf.has(e.target)) expect(partOf.get(e.source)).toBe(partOf.get(e.target));
      }
      for (const part of parts) {
        // connected: an undirected walk inside the part from its first node reaches all of it
        const inPart = new Set(part);
        const seen = new Set([part[0]]);
        const todo = [part[0]];
        while (todo.length > 0) {
          const cur = todo.pop() as string;
          for (const e of graph.edges) {
            const other = e.source === cur ? e.target : e.target === cur ? e.source : null;
            if (other && inPart.has(other) && !seen.has(other)) {
              seen.add(other);
              todo.push(other);
            }
          }
        }
        expect(seen.size).toBe(part.length);
      }
      parts.forEach((part, k) => {
        for (const n of part) expect(index.callOf(g.id, n)).toBe(k);
        expect(parseInstanceId(index, instanceId(g.id, k))).toEqual({ group: g.id, call: k });
      });
      expect(parseInstanceId(index, instanceId(g.id, parts.length))).toBeNull();
    }
  });

  it("indexes edges by both ends", () => {
    for (const e of graph.edges) {
      expect(index.outEdges.get(e.source)).toContain(e);
      expect(index.inEdges.get(e.target)).toContain(e);
    }
  });
});

describe("malformed layer trees", () => {
  const base: GraphPayload = {
    schema_version: "1.0",
    nodes: [{ id: "n0", name: "AddGradNode", ptr: "0x1", kind: "output", group: "a" }],
    edges: [],
    groups: [],
  };

  const outside = { id: "n1", name: "ScaleGradNode", ptr: "0x2", kind: "op" as const, group: null };

  it("treats a group whose parent is unknown as top-level", () => {
    const groups = [{ id: "a", name: "a", type: "T", parent: "zzz" }];
    const index = buildIndex({ ...base, nodes: [...base.nodes, outside], groups });
    expect(index.level.get("a")).toBe(0);
    expect(index.ancestors("n0")).toEqual(["a"]);
    expect(index.wrapper).toBeNull();
  });

  it("counts levels below a single top-level group that holds every node", () => {
    const groups = [
      { id: "m", name: "Model", type: "Model", parent: null },
      { id: "a", name: "a", type: "T", parent: "m" },
    ];
    const index = buildIndex({ ...base, groups });
    expect(index.wrapper).toBe("m");
    expect([index.level.get("m"), index.level.get("a"), index.maxLevel]).toEqual([-1, 0, 0]);
    const split = buildIndex({ ...base, nodes: [...base.nodes, outside], groups });
    expect(split.wrapper).toBeNull();
    expect([split.level.get("m"), split.level.get("a"), split.maxLevel]).toEqual([0, 1, 1]);
  });

  it("breaks a cycle in parent links instead of looping", () => {
    const index = buildIndex({
      ...base,
      groups: [
        { id: "a", name: "a", type: "T", parent: "b" },
        { id: "b", name: "b", type: "T", parent: "a" },
      ],
    });
    const chain = index.ancestors("n0");
    expect(chain[0]).toBe("a");
    expect(new Set(chain).size).toBe(chain.length);
    expect(index.maxLevel).toBeLessThanOrEqual(1);
  });

  it("ignores a node group that does not exist", () => {
    const index = buildIndex(base);
    expect(index.ancestors("n0")).toEqual([]);
    expect(index.firstNode("a")).toBeUndefined();
    expect(index.descendantNodes("a")).toEqual([]);
  });
});

describe.each(FIXTURE_NAMES)("drawing tables of %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);
  const inside = (g: string, n: string): boolean => chainFromJson(graph, n).includes(g);
  const isNode = new Set(graph.nodes.map((n) => n.id));
  const between = graph.edges.filter((e) => isNode.has(e.source) && isNode.has(e.target));

  it("lists each group's own nodes and the edges entering it, straight from the JSON", () => {
    expect(index.linkEdges.map((e) => e.id)).toEqual(between.map((e) => e.id));
    const ids = (positions: Int32Array): string[] => Array.from(positions, (k) => index.linkEdges[k].id);
    for (const g of [null, ...graph.groups.map((x) => x.id)]) {
      expect(index.ownNodes(g)).toEqual(graph.nodes.filter((n) => (n.group ?? null) === g).map((n) => n.id));
      if (g === null) continue;
      const entering = between.filter((e) => inside(g, e.target) && !inside(g, e.source));
      expect(ids(index.enteringGroup(g))).toEqual(entering.map((e) => e.id));
    }
    for (const n of graph.nodes) {
      expect(ids(index.enteringNode(n.id))).toEqual(between.filter((e) => e.target === n.id).map((e) => e.id));
    }
    expect([index.ownNodes("no such group"), index.enteringGroup("no such group").length]).toEqual([[], 0]);
  });
});
