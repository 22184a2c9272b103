// The JS reader refuses the same broken documents the Python side does
// (tests/fixtures/broken/graph_documents.json; tests/test_graph_validation.py), naming the field.
import { describe, expect, it } from "vitest";
import bad from "../../tests/fixtures/broken/graph_documents.json";
import { PayloadError, decodePayload, readGraph } from "./payload";
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
