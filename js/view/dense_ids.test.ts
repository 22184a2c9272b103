import { describe, expect, it } from "vitest";
import { DENSE_FROM, denseIds, denseNumber } from "./dense_ids";
import { buildIndex } from "./graph_index";
import { checkIds, checkPayload } from "./payload_check";
import type { GraphGroup, GraphPayload } from "./types";

const table = (ids: unknown[]) => ids.map((id) => ({ id }));

describe("dense ids", () => {
  it("reads a position off an id of the table's prefix, and only off such an id", () => {
    const ids = denseIds(table(["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10", "n11"]), 1);
    expect(ids).toEqual({ prefix: "n", count: 12 });
    if (ids === null) return;
    expect(["n0", "n9", "n10", "n11"].map((id) => denseNumber(ids, id))).toEqual([0, 9, 10, 11]);
    for (const id of ["n12", "n01", "n00", "n", "n+1", "n-1", "n1.0", "n 1", "N1", "m1", "1", "", "n0000000001"])
      expect(denseNumber(ids, id)).toBe(-1);
    expect(denseNumber(ids, 3 as unknown as string)).toBe(-1);
  });

  it("takes only tables whose entry k is the prefix and k, with a valid id prefix", () => {
    expect(denseIds(table(["a10", "a11", "a12"]), 1)).toEqual({ prefix: "a1", count: 3 });
    for (const ids of [
      ["n1", "n2"], // from one
      ["n0", "n2", "n1"], // out of order
      ["n0", "n01"], // a leading zero
      ["n0", "n0"], // repeated
      ["0", "1"], // no prefix: not an id
      ["_0", "_1"],
      ["n0", 1],
      [0, 1],
    ])
      expect(denseIds(table(ids), 1)).toBeNull();
    expect(denseIds(table(["n0", "n1"]))).toBeNull(); // smaller than DENSE_FROM: a Set is cheaper
  });
});

/** A chain of `count` nodes in groups of ten (ids from `id`), with an edge skipping one
 * node every seventh: big enough for the dense path. */
function chain(count: number, id: (k: number) => string): GraphPayload {
  const groups: GraphGroup[] = [{ id: "root", name: "model", type: "M", parent: null }];
  for (let b = 0; b < count / 10; b++) groups.push({ id: `g${b}`, name: `blocks.${b}`, type: "B", parent: "root" });
  const node = (k: number) => ({
    id: id(k),
    name: "AddGradNode",
    ptr: "0x1",
    kind: "op" as const,
    group: `g${Math.floor(k / 10)}`,
    param: null,
    call_site: null,
    inputs: [],
    outputs: [],
    tensor: null,
  });
  const nodes = Array.from({ length: count }, (_, k) => node(k));
  const edges = [];
  for (let k = 1; k < count; k++) {
    edges.push({ id: `e${edges.length}`, source: id(k - 1), target: id(k), index: 0, grad: null, slot: null });
    if (k % 7 === 0 && k > 1)
      edges.push({ id: `e${edges.length}`, source: id(k - 2), target: id(k), index: 1, grad: null, slot: null });
  }
  return { schema_version: "2.0", nodes, edges, groups };
}

describe("a big graph's index and checks, dense ids against the general path", () => {
  const count = DENSE_FROM + 10;
  const dense = chain(count, (k) => `n${k}`);
  const other = chain(count, (k) => `n${k}_`); // not dense: Maps and Sets
  const a = buildIndex(dense);
  const b = buildIndex(other);

  it("numbers, chains, calls and link tables alike", () => {
    expect(denseIds(dense.nodes)).not.toBeNull();
    expect(denseIds(other.nodes)).toBeNull();
    for (let k = 0; k < count; k += 97) {
      expect(a.nodeOrder(`n${k}`)).toBe(k);
      expect(a.nodeOrder(`n${k}`)).toBe(b.nodeOrder(`n${k}_`));
      expect(a.ancestors(`n${k}`)).toEqual(b.ancestors(`n${k}_`));
      expect(a.callOf("root", `n${k}`)).toBe(b.callOf("root", `n${k}_`));
      expect([...a.enteringNode(`n${k}`)]).toEqual([...b.enteringNode(`n${k}_`)]);
    }
    for (const id of ["n01", `n${count}`, "n", "g3", "x"]) {
      expect(a.nodeOrder(id)).toBe(-1);
      expect([...a.enteringNode(id)]).toEqual([]);
      expect(a.ancestors(id)).toEqual(id === "g3" ? ["root"] : []);
    }
    expect([...a.linkEnds.from]).toEqual([...b.linkEnds.from]);
    expect([...a.linkEnds.to]).toEqual([...b.linkEnds.to]);
    expect(a.calls("root").length).toBe(1);
    expect(a.calls("g5")).toEqual([["n50", "n51", "n52", "n53", "n54", "n55", "n56", "n57", "n58", "n59"]]);
  });

  it("finds a dangling or repeated id as the general path does", () => {
    expect(() => checkPayload(dense)).not.toThrow();
    expect(checkIds(dense.nodes, "nodes").has(`n${count - 1}`)).toBe(true);
    for (const bad of ["n01", `n${count}`, "n+1"]) {
      const g = chain(count, (k) => `n${k}`);
      g.edges[3].target = bad;
      expect(() => checkPayload(g)).toThrow(`edges[3].target: "${bad}" is not the id of a node`);
    }
    const repeated = chain(count, (k) => `n${k}`);
    repeated.nodes[count - 1].id = "n7";
    expect(() => checkPayload(repeated)).toThrow(`nodes[${count - 1}].id: "n7" is the id of an earlier entry too`);
  });
});
