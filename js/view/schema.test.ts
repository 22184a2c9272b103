// The shared graph fixtures satisfy the JSON Schema the Python package ships: the front end and
// the tracer read one contract (paddleviz_widget/schema/graph.schema.json, schema 2.2).
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import schema from "../../paddleviz_widget/schema/graph.schema.json";
import { FIXTURE_NAMES, document, fixture } from "./test_fixtures";

const fixtures = FIXTURE_NAMES;
const validate = new Ajv2020({ allErrors: true }).compile(schema);

describe("graph.schema.json", () => {
  it("has fixtures to check", () => {
    expect(fixtures.length).toBeGreaterThan(0);
  });

  it.each(fixtures)("accepts the traced fixture %s", (name) => {
    const ok = validate(document(name));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // The fixtures are traced: the fields the explorer relies on are filled in.
    const payload = fixture(name);
    expect(payload.groups.length).toBeGreaterThan(0);
    expect(payload.edges.every((e) => e.grad !== null)).toBe(true);
  });

  it("rejects a payload the front end could not draw", () => {
    const payload = document(fixtures[0]) as {
      nodes: Record<string, unknown>[];
      edges: Record<string, unknown>[];
    };
    payload.nodes[0].kind = "tensor";
    delete payload.edges[0].source;
    expect(validate(payload)).toBe(false);
    const paths = (validate.errors ?? []).map((e) => e.instancePath);
    expect(paths).toContain("/nodes/0/kind");
    expect(paths).toContain("/edges/0");
  });

  it("rejects fields it does not define and the 1.0 nested layout", () => {
    const payload = document(fixtures[0]) as { edges: Record<string, unknown>[] };
    payload.edges[0].grad = { dtype: "float32", shape: [1], place: "cpu" };
    payload.edges[0].colour = "red";
    expect(validate(payload)).toBe(false);
    const paths = (validate.errors ?? []).map((e) => e.instancePath);
    expect(paths).toContain("/edges/0/grad");
    expect(paths).toContain("/edges/0");
  });
});
