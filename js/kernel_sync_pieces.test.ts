// readSteps: a big graph's plain pieces decoded as they are parsed give what the whole document
// parsed, then read, gives (readGraph of graphDocument): the same payload, and with two faults
// the same first error (a piece that is not JSON before any decoding error).
import { describe, expect, it } from "vitest";
import { type Inflater, inflateHere } from "./inflate_worker";
import { graphDocument, loadGraph, type ReadGraph, readSteps } from "./kernel_sync";
import { readGraph } from "./view/payload";
import { document, FIXTURE_NAMES } from "./view/test_fixtures";

type Doc = Record<string, unknown>;
const bytes = (text: string): DataView => new DataView(new TextEncoder().encode(text).buffer);
const asBuffer = (value: unknown): DataView => bytes(JSON.stringify(value));

/** widget/wire.py's pieces of `doc` in slices of `size`; `edit` changes the parts (values, or
 * DataViews of text that is not JSON) before they are written. */
function asPieces(
  doc: Doc,
  size: number,
  edit: (parts: { head: unknown; nodes: unknown[]; edges: unknown[] }) => void = () => {},
) {
  const slices = (list: unknown[]): unknown[] => {
    const out: unknown[] = [];
    for (let k = 0; k < list.length; k += size) out.push(list.slice(k, k + size));
    return out;
  };
  const parts = {
    head: { ...doc, nodes: [], edges: [] } as unknown,
    nodes: slices(doc.nodes as unknown[]),
    edges: slices(doc.edges as unknown[]),
  };
  edit(parts);
  const wire = (v: unknown): DataView => (v instanceof DataView ? v : asBuffer(v));
  return { head: wire(parts.head), nodes: parts.nodes.map(wire), edges: parts.edges.map(wire) };
}

function read(value: unknown) {
  const steps = readSteps(value);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
/** What the page read before readSteps: the pieces put back, then the document read. */
const whole = (value: unknown) => readGraph(graphDocument(value));

const lenet = (): Doc => JSON.parse(JSON.stringify(document("lenet")));
const NOT_JSON = bytes("{oops");

describe("a graph's pieces decoded as they are parsed", () => {
  it("is the document read whole, for every fixture and piece size", () => {
    for (const name of FIXTURE_NAMES) {
      const doc = document(name) as Doc;
      for (const size of [1, 7, 1000]) {
        const pieces = asPieces(doc, size);
        const got = read(pieces);
        expect(got.error).toBeNull();
        expect(JSON.stringify(got)).toBe(JSON.stringify(whole(pieces)));
        expect(got).toEqual(readGraph(doc));
      }
    }
  });

  it("says a piece that is not JSON before an earlier piece's decoding error", () => {
    const doc = lenet();
    (doc.nodes as Doc[])[0].call_site = 9999; // node n0's site: out of range
    const broken = asPieces(doc, 5, (p) => {
      p.edges[1] = NOT_JSON;
    });
    expect(read(broken).error).toMatch(/not JSON text/);
    expect(read(broken)).toEqual(whole(broken));
    // Without the piece that is not JSON: the decoding error, the same words.
    const faulty = asPieces(doc, 5);
    expect(read(faulty).error).toBe("Cannot show this graph: node n0: site index 9999 is out of range (table has 2)");
    expect(read(faulty)).toEqual(whole(faulty));
  });

  it("keeps the first decoding error, and the checks' errors, in order", () => {
    const cases: ((d: Doc) => void)[] = [
      (d) => {
        (d.nodes as Doc[])[4].diff = { status: "x" };
        (d.edges as Doc[])[0].stats = [1];
      },
      (d) => {
        (d.edges as Doc[])[6].slot = 99;
        (d.edges as Doc[])[1].grad = 9999;
      },
      (d) => {
        (d.nodes as Doc[])[3].id = (d.nodes as Doc[])[1].id; // found by the checks, or by a numeric slot
        (d.edges as Doc[])[2].slot = 0;
      },
      (d) => {
        d.tensors = 5;
      },
      (d) => {
        (d.edges as Doc[])[0].target = "zz";
      },
    ];
    for (const change of cases) {
      const doc = lenet();
      change(doc);
      const pieces = asPieces(doc, 5);
      expect(read(pieces).error).not.toBeNull();
      expect(read(pieces)).toEqual(whole(pieces));
    }
  });

  it("reads a head that is not a 2.x document's, and odd pieces, as the whole read does", () => {
    const edits: ((p: { head: unknown; nodes: unknown[]; edges: unknown[] }) => void)[] = [
      (p) => (p.head = null),
      (p) => (p.head = [1]),
      (p) => (p.head = { ...(p.head as Doc), schema_version: "1.0" }),
      (p) => (p.head = NOT_JSON),
      (p) => (p.nodes[1] = { a: 1 }), // not iterable: "list is not iterable", as before
      (p) => (p.nodes[1] = bytes('"ab"')), // a string: iterated into letters
      (p) => p.nodes.splice(1, 0, []),
    ];
    for (const edit of edits) {
      const pieces = asPieces(lenet(), 5, edit);
      expect(read(pieces)).toEqual(whole(pieces));
      expect(read(pieces).error).toBe(whole(pieces).error);
    }
  });
});

/** Deflated pieces, as widget/wire.py sends them. */
async function deflated(pieces: { head: DataView; nodes: DataView[]; edges: DataView[] }) {
  const deflate = async (b: DataView): Promise<DataView> => {
    const stream = new Blob([b as DataView<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate"));
    return new DataView(await new Response(stream).arrayBuffer());
  };
  return {
    head: await deflate(pieces.head),
    nodes: await Promise.all(pieces.nodes.map(deflate)),
    edges: await Promise.all(pieces.edges.map(deflate)),
    deflate: true,
  };
}

/** loadGraph's read of `value`, with the pieces inflated by `inflater` (null: on the main thread
 * before any is parsed, as before the worker). */
function loaded(value: unknown, inflater: Inflater | null): Promise<ReadGraph> {
  return new Promise((resolve) =>
    loadGraph(
      value,
      () => true,
      resolve,
      1,
      () => Promise.resolve(),
      inflater,
    ),
  );
}

/** An inflater whose pieces come back in the reverse order of asking (the worker's may come
 * in any order relative to the page's parsing). */
function shuffled(): Inflater {
  let delay = 40;
  return (bytes) => {
    delay = Math.max(0, delay - 3);
    const wait = delay;
    return inflateHere(bytes).then((got) => new Promise((resolve) => setTimeout(() => resolve(got), wait)));
  };
}

describe("deflated pieces read while they are inflated", () => {
  const NOT_DEFLATED = bytes("not deflated");
  const cases: [string, (d: Doc) => void, (p: Awaited<ReturnType<typeof deflated>>) => void][] = [
    ["a whole graph", () => {}, () => {}],
    [
      "a node's fault, then a piece that does not inflate",
      (d) => ((d.nodes as Doc[])[0].call_site = 9999),
      (p) => (p.edges[1] = NOT_DEFLATED),
    ],
    [
      "a piece that is not JSON, then one that does not inflate",
      () => {},
      (p) => {
        p.nodes[0] = p.head; // the head's text: an object, not a list
        p.edges[2] = NOT_DEFLATED;
      },
    ],
    [
      "two that do not inflate: the first is said",
      () => {},
      (p) => {
        p.nodes[1] = NOT_DEFLATED;
        p.edges[0] = new DataView(p.edges[0].buffer, 0, 5);
      },
    ],
    [
      "a head that is not 2.x, then one that does not inflate",
      () => {},
      (p) => {
        p.head = p.nodes[0];
        p.edges[0] = NOT_DEFLATED;
      },
    ],
    ["a node's fault alone", (d) => ((d.nodes as Doc[])[2].tensor = 9999), () => {}],
  ];
  it("says what inflating them all first said", async () => {
    for (const [, change, edit] of cases) {
      const doc = lenet();
      change(doc);
      const pieces = await deflated(asPieces(doc, 5));
      edit(pieces);
      const before = await loaded(pieces, null);
      for (const inflater of [inflateHere, shuffled()]) {
        const got = await loaded(pieces, inflater);
        expect(got.error).toBe(before.error);
        expect(JSON.stringify(got)).toBe(JSON.stringify(before));
      }
    }
    const pieces = await deflated(asPieces(document("resnet18"), 50));
    expect(await loaded(pieces, shuffled())).toEqual(readGraph(document("resnet18")));
  });
});
