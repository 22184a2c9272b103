// decodePayload: schema 2.x (tables + indices, sparse) and 1.0 documents -> the in-memory
// GraphPayload. Checked against the Python encoder on a real graph, on small hand-written
// documents for each rule, and on broken documents.
import { describe, expect, it } from "vitest";
import v1Json from "../../tests/fixtures/graphs/v1/lenet.json";
import v1As2Json from "../../tests/fixtures/graphs/v1/lenet.as_2.0.json";
import { decodePayload, EMPTY_PAYLOAD, PayloadError, readGraph, readGraphSteps } from "./payload";
import { DOCUMENTS, FIXTURE_NAMES } from "./test_fixtures";
import type { GraphPayload } from "./types";

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const withoutVersion = (p: GraphPayload): Omit<GraphPayload, "schema_version"> => {
  const { schema_version: _, ...rest } = p;
  return rest;
};

/** Small 2.0 document that uses every table and every default. */
function small(): Record<string, any> {
  return {
    schema_version: "2.0",
    tensors: [
      ["float32", [1, 84], "cpu"],
      ["float32", [84], "cpu"],
      [null, null, null],
    ],
    files: ["model.py"],
    sites: [
      [0, 21, "forward"],
      [0, 7, null],
    ],
    ops: {
      MatmulGradNode: {
        inputs: [{ name: "grad_out", tensor: "@Grad" }, { name: "x" }],
        outputs: [
          { name: "grad_x", tensor: "@Grad" },
          { name: "grad_y", tensor: "@Grad" },
        ],
      },
    },
    nodes: [
      {
        id: "n0",
        name: "MatmulGradNode",
        ptr: "0x1",
        kind: "output",
        group: "g1",
        call_site: 0,
        inputs: [0, null],
        outputs: [0, 1],
        tensor: 0,
      },
      {
        id: "n1",
        name: "MatmulGradNode",
        ptr: "0x2",
        call_site: 1,
        inputs: [0, { name: "extra", tensor: "T_1", grad: 2 }, { name: "more" }],
        outputs: [1],
      },
      {
        id: "n2",
        name: "GradNodeAccumulation",
        ptr: "0x3",
        kind: "param",
        param: { name: "fc.bias", shape: [84], dtype: "float32" },
      },
      { id: "n3", name: "GradNodeAccumulation", ptr: "0x4", kind: "param", param: { name: "leaf" } },
    ],
    edges: [
      { id: "e0", source: "n0", target: "n1", grad: 0, slot: 0 },
      { id: "e1", source: "n0", target: "n2", index: 1, grad: 1, slot: 1 },
      { id: "e2", source: "n1", target: "n3", slot: "grad_w" },
    ],
    groups: [
      { id: "g0", name: "", type: "Model" },
      { id: "g1", name: "fc", type: "Linear", parent: "g0" },
    ],
    meta: { annotations: ["dump"] },
  };
}

describe("decodePayload", () => {
  it("reads schema 2.1's gradient statistics and parameter status", () => {
    const doc = small();
    doc.schema_version = "2.1";
    doc.edges[0].stats = [2.5, 1, 0.25, 0.5, 0, 3];
    doc.nodes[2].grad_status = "zero";
    const g = decodePayload(doc);
    expect(g.edges[0].stats).toEqual({ norm: 2.5, max_abs: 1, mean_abs: 0.25, zero_fraction: 0.5, nan: 0, inf: 3 });
    expect(g.edges[1]).not.toHaveProperty("stats");
    expect(g.nodes[2].grad_status).toBe("zero");
    expect(g.nodes[3]).not.toHaveProperty("grad_status");
  });

  it("reads the 2.0 LeNet as the same graph as its saved 1.0 document", () => {
    const fromV1 = decodePayload(copy(v1Json));
    const fromV2 = decodePayload(copy(v1As2Json));
    expect(fromV1.schema_version).toBe("1.0");
    expect(fromV2.schema_version).toBe("2.0");
    expect(withoutVersion(fromV2)).toEqual(withoutVersion(fromV1));
    expect(fromV1.nodes.some((n) => (n.inputs ?? []).length > 0 && n.call_site !== null)).toBe(true);
  });

  it("passes a 1.0 document through as it is", () => {
    const doc = copy(v1Json);
    expect(decodePayload(doc)).toBe(doc);
  });

  it.each(FIXTURE_NAMES)("decodes the fixture %s in full", (name) => {
    const doc = DOCUMENTS[name] as { nodes: unknown[]; edges: unknown[]; groups: unknown[] };
    const payload = decodePayload(copy(doc));
    expect(payload.nodes).toHaveLength(doc.nodes.length);
    expect(payload.edges).toHaveLength(doc.edges.length);
    expect(payload.groups).toHaveLength(doc.groups.length);
    const keys = ["call_site", "group", "id", "inputs", "kind", "name", "outputs", "param", "ptr", "tensor"];
    for (const n of payload.nodes) expect(Object.keys(n).sort()).toEqual(keys);
    for (const e of payload.edges)
      expect(Object.keys(e).sort()).toEqual(["grad", "id", "index", "slot", "source", "target"]);
  });

  it("spells out every field, filling the defaults", () => {
    const p = decodePayload(small());
    const [n0, n1, n2, n3] = p.nodes;
    expect(n0).toEqual({
      id: "n0",
      name: "MatmulGradNode",
      ptr: "0x1",
      kind: "output",
      group: "g1",
      param: null,
      call_site: { file: "model.py", line: 21, function: "forward" },
      inputs: [
        { name: "grad_out", tensor: "@Grad", dtype: "float32", shape: [1, 84], place: "cpu" },
        { name: "x", tensor: null, dtype: null, shape: null, place: null },
      ],
      outputs: [
        { name: "grad_x", tensor: "@Grad", dtype: "float32", shape: [1, 84], place: "cpu" },
        { name: "grad_y", tensor: "@Grad", dtype: "float32", shape: [84], place: "cpu" },
      ],
      tensor: { dtype: "float32", shape: [1, 84], place: "cpu" },
    });
    expect(n1.kind).toBe("op");
    expect(n1.group).toBeNull();
    expect(n1.call_site).toEqual({ file: "model.py", line: 7, function: null });
    expect(n1.inputs).toEqual([
      { name: "grad_out", tensor: "@Grad", dtype: "float32", shape: [1, 84], place: "cpu" },
      { name: "extra", tensor: "T_1", dtype: null, shape: null, place: null },
      { name: "more", tensor: null, dtype: null, shape: null, place: null },
    ]);
    expect(n1.outputs?.map((s) => s.name)).toEqual(["grad_x"]);
    expect(n2.param).toEqual({ name: "fc.bias", shape: [84], dtype: "float32" });
    expect(n3.param).toEqual({ name: "leaf", shape: null, dtype: null });
    expect(n3.inputs).toEqual([]);
    expect(p.edges).toEqual([
      {
        id: "e0",
        source: "n0",
        target: "n1",
        index: 0,
        grad: { dtype: "float32", shape: [1, 84], place: "cpu" },
        slot: "grad_x",
      },
      {
        id: "e1",
        source: "n0",
        target: "n2",
        index: 1,
        grad: { dtype: "float32", shape: [84], place: "cpu" },
        slot: "grad_y",
      },
      { id: "e2", source: "n1", target: "n3", index: 0, grad: null, slot: "grad_w" },
    ]);
    expect(p.groups).toEqual([
      { id: "g0", name: "", type: "Model", parent: null },
      { id: "g1", name: "fc", type: "Linear", parent: "g0" },
    ]);
    expect(p.meta).toEqual({ annotations: ["dump"] });
  });

  it("shares one frozen description per tensors entry", () => {
    const p = decodePayload(small());
    expect(p.edges[0].grad).toBe(p.nodes[0].tensor);
    expect(Object.isFrozen(p.edges[0].grad)).toBe(true);
    expect(Object.isFrozen(p.edges[0].grad?.shape)).toBe(true);
    expect(() => p.edges[0].grad?.shape?.push(1)).toThrow(TypeError);
    expect(p.nodes[0].inputs?.[0].shape).toBe(p.edges[0].grad?.shape);
  });

  const broken: Array<[string, (d: Record<string, any>) => void, RegExp]> = [
    [
      "an unknown version",
      (d) => {
        d.schema_version = "3.0";
      },
      /graph schema_version "3.0" is a newer paddleviz_widget's \(this widget reads '2.3', '2.2', '2.1', '2.0' and '1.0'\): upgrade it \(pip install -U paddleviz_widget\)/,
    ],
    [
      "a version no paddleviz_widget wrote",
      (d) => {
        d.schema_version = "2.x";
      },
      /unknown graph schema_version "2.x": .*'1.0'; this is not a graph document paddleviz_widget wrote/,
    ],
    [
      "no version",
      (d) => {
        delete d.schema_version;
      },
      /unknown graph schema_version undefined/,
    ],
    [
      "no nodes",
      (d) => {
        delete d.nodes;
      },
      /malformed schema 2.0 graph document: "nodes" is not an array/,
    ],
    [
      "no tensors table",
      (d) => {
        d.tensors = {};
      },
      /"tensors" is not an array/,
    ],
    [
      "an edge grad out of range",
      (d) => {
        d.edges[1].grad = 9;
      },
      /edge e1: tensor index 9 is out of range \(table has 3\)/,
    ],
    [
      "a node tensor out of range",
      (d) => {
        d.nodes[0].tensor = -1;
      },
      /node n0: tensor index -1 is out of range/,
    ],
    [
      "a slot tensor out of range",
      (d) => {
        d.nodes[0].inputs[1] = 3;
      },
      /node n0 inputs\[1\]: tensor index 3 is out of range/,
    ],
    [
      "stats that are not six numbers",
      (d) => {
        d.edges[0].stats = [1, 2];
      },
      /edge e0: stats is not \[norm, max_abs/,
    ],
    [
      "a slot beyond the signature",
      (d) => {
        d.nodes[0].outputs.push(0);
      },
      /node n0 outputs\[2\]: ops\["MatmulGradNode"\]\.outputs slot index 2 is out of range \(table has 2\)/,
    ],
    [
      "an op without a signature",
      (d) => {
        d.ops = {};
      },
      /node n0 inputs\[0\]: ops\["MatmulGradNode"\]\.inputs slot index 0 is out of range \(table has 0\)/,
    ],
    [
      "a call site out of range",
      (d) => {
        d.nodes[1].call_site = 2;
      },
      /node n1: site index 2 is out of range/,
    ],
    [
      "a file out of range",
      (d) => {
        d.sites[1][0] = 1;
      },
      /sites\[1\]: file index 1 is out of range/,
    ],
    [
      "an edge slot out of range",
      (d) => {
        d.edges[0].slot = 5;
      },
      /edge e0: slot \(outputs of n0\) index 5 is out of range/,
    ],
    [
      "a short tensor entry",
      (d) => {
        d.tensors[0] = ["float32"];
      },
      /tensors\[0\]: expected \[dtype, shape, place\]/,
    ],
    [
      "a node that is not an object",
      (d) => {
        d.nodes[1] = null;
      },
      /malformed schema 2.0 graph document: /,
    ],
  ];
  it.each(broken)("says what is wrong with %s", (_, change, message) => {
    const doc = small();
    change(doc);
    expect(() => decodePayload(doc)).toThrow(PayloadError);
    expect(() => decodePayload(doc)).toThrow(message);
  });

  it("says what it was given when it is not a document", () => {
    expect(() => decodePayload(null)).toThrow("a graph document is a JSON object, not null");
    expect(() => decodePayload([])).toThrow("not an array");
    expect(() => decodePayload("{}")).toThrow("not string");
  });
});

describe("readGraph (the widget's graph trait)", () => {
  it("reads a document", () => {
    const read = readGraph(small());
    expect(read.error).toBeNull();
    expect(read.blank).toBe(false);
    expect(read.payload.nodes).toHaveLength(4);
  });

  it("takes nothing yet for the empty graph, quietly", () => {
    for (const raw of [{}, null, undefined])
      expect(readGraph(raw)).toEqual({ payload: EMPTY_PAYLOAD, error: null, blank: true });
  });

  it("turns a broken document into the empty graph and a message", () => {
    const doc = small();
    doc.edges[0].grad = 9;
    const read = readGraph(doc);
    expect(read.payload).toBe(EMPTY_PAYLOAD);
    expect(read.blank).toBe(false); // a graph, though unreadable: drawn empty, with the message
    expect(read.error).toBe("Cannot show this graph: edge e0: tensor index 9 is out of range (table has 3)");
  });
});

describe("readGraphSteps", () => {
  const drain = (raw: unknown): { steps: number; value: ReturnType<typeof readGraph> } => {
    const steps = readGraphSteps(raw);
    for (let count = 0; ; count++) {
      const next = steps.next();
      if (next.done) return { steps: count, value: next.value };
    }
  };

  it("reads what readGraph reads, the nodes, the edges and the checks' tables each a step apart", () => {
    for (const name of FIXTURE_NAMES) {
      const got = drain(DOCUMENTS[name]);
      expect(got.value).toEqual(readGraph(DOCUMENTS[name]));
      expect(got.steps).toBe(4); // fixtures have fewer than STEP_ITEMS nodes and edges
    }
    // A mistake found by the checks (after the decoding's steps) reads as readGraph says it.
    const broken = { ...(DOCUMENTS.lenet as object), groups: [{ id: "g0", name: "a", type: "A", parent: "g0" }] };
    expect(drain(broken).value).toEqual(readGraph(broken));
    expect(drain(broken).value.error).toMatch(/own ancestor/);
    expect(drain({}).value.blank).toBe(true);
    expect(drain({}).steps).toBe(0);
  });
});
