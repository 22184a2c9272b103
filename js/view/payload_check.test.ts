// The JS reader refuses the same broken documents the Python side does
// (tests/fixtures/broken/graph_documents.json; tests/test_graph_validation.py), naming the field.
import { describe, expect, it } from "vitest";
import bad from "../../tests/fixtures/broken/graph_documents.json";
import { PayloadError, decodePayload, readGraph } from "./payload";
import { checkPayload, checkPayloadSteps } from "./payload_check";
import type { GraphPayload } from "./types";
import { document } from "./test_fixtures";

type Case = { name: string; set: [(string | number)[], unknown][]; field: string };

function apply(doc: Record<string, unknown>, changes: Case["set"]): Record<string, unknown> {
  for (const [path, value] of changes) {
    let at = doc as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
    at[path[path.length - 1]] = value;
  }
  return doc;
}

const cases = (bad as unknown as { cases: Case[] }).cases;

describe("broken documents (shared with the Python tests)", () => {
  it("reads the unbroken document", () => {
    expect(decodePayload(document("lenet")).nodes.length).toBeGreaterThan(0);
  });

  it.each(cases.map((c) => [c.name, c] as const))("refuses: %s", (_name, c) => {
    const doc = apply(document("lenet"), c.set);
    expect(() => decodePayload(doc)).toThrow(PayloadError);
    expect(() => decodePayload(doc)).toThrow(`${c.field}: `);
    // The widget draws nothing and says why.
    const { payload, error } = readGraph(doc);
    expect(payload.nodes).toEqual([]);
    expect(error).toContain(c.field);
  });

  it("checks 1.0 documents too", () => {
    const doc = {
      schema_version: "1.0",
      nodes: [],
      edges: [{ id: "e0", source: "n0", target: "n1", index: 0 }],
      groups: [],
    };
    expect(() => decodePayload(doc)).toThrow("edges[0].source: ");
  });
});

describe("the checks in steps (a big graph's page reads them over several tasks)", () => {
  /** The error checkPayloadSteps(graph, 1) throws (null: none), and its steps. */
  const drain = (graph: GraphPayload): { steps: number; error: string | null } => {
    const steps = checkPayloadSteps(graph, 1);
    let count = 0;
    try {
      while (!steps.next().done) count++;
    } catch (err) {
      return { steps: count, error: (err as Error).message };
    }
    return { steps: count, error: null };
  };
  const errorOf = (graph: GraphPayload): string | null => {
    try {
      checkPayload(graph);
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  };

  it("a step per node and edge and between the tables; the same first error as in one go", () => {
    const good = decodePayload(document("lenet"));
    expect(drain(good)).toEqual({ steps: good.nodes.length + good.edges.length + 2, error: null });
    const breaks: Array<(g: GraphPayload) => void> = [
      (g) => (g.nodes[3] = { ...g.nodes[3], id: g.nodes[1].id }),
      (g) => (g.nodes[g.nodes.length - 1] = { ...g.nodes[g.nodes.length - 1], name: "" }),
      (g) => (g.edges[g.edges.length - 1] = { ...g.edges[g.edges.length - 1], source: "nowhere" }),
      (g) => (g.edges[2] = { ...g.edges[2], id: g.edges[0].id }),
      (g) => (g.groups[0] = { ...g.groups[0], parent: g.groups[0].id }),
      // Two mistakes: the first in check order (nodes before edges) is the one said.
      (g) => {
        g.edges[0] = { ...g.edges[0], target: "nowhere" };
        g.nodes[g.nodes.length - 1] = { ...g.nodes[g.nodes.length - 1], group: "nowhere" };
      },
    ];
    for (const spoil of breaks) {
      const g = decodePayload(document("lenet"));
      spoil(g);
      const error = errorOf(g);
      expect(error).not.toBeNull();
      expect(drain(g).error).toBe(error);
    }
  });
});
