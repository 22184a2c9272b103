import { describe, expect, it } from "vitest";
import type { AnyModel } from "@anywidget/types";
import {
  answerKernel,
  answerRequest,
  answerUndone,
  graphBytes,
  graphDocument,
  inflatePieces,
  loadGraph,
  type ReadGraph,
} from "./kernel_sync";
import { PayloadError, readGraph } from "./view/payload";
import type { WidgetModel } from "./model_contract";
import { autoDepth, groupsToDepth } from "./view/expansion";
import { buildIndex, type GraphIndex } from "./view/graph_index";
import { document, fixture } from "./view/test_fixtures";

// What the kernel sends: the graph document as one buffer of JSON text (widget/wire.py).
const asBuffer = (doc: unknown): DataView => new DataView(new TextEncoder().encode(JSON.stringify(doc)).buffer);

describe("the graph from the kernel", () => {
  it("reads a buffer of JSON text, and says when it is not JSON", () => {
    const doc = document("lenet");
    expect(graphDocument(asBuffer(doc))).toEqual(doc);
    const notJson = new DataView(new TextEncoder().encode("{oops").buffer);
    expect(graphDocument(notJson)).toBeInstanceOf(PayloadError);
    // Said, not taken for "no graph yet": a blank read draws nothing and says nothing.
    const read = readGraph(graphDocument(notJson));
    expect(read.blank).toBe(false);
    expect(read.error).toMatch(/^Cannot show this graph: the graph the kernel sent is not JSON text/);
    expect(graphDocument(doc)).toBe(doc);
  });

  it("reads a big graph over several tasks, and drops it if a newer one came", async () => {
    const raw = asBuffer(document("resnet18"));
    const got: Array<[ReadGraph, GraphIndex]> = [];
    expect(
      loadGraph(
        raw,
        () => true,
        (read, index) => got.push([read, index]),
        1,
      ),
    ).toBe(true);
    expect(got).toHaveLength(0); // nothing yet: the page gets its turn in between
    let current = true;
    loadGraph(
      raw,
      () => current,
      () => got.push([] as never),
      1,
    );
    current = false;
    for (let wait = 0; wait < 100 && got.length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the dropped read has had its turns too
    expect(got).toHaveLength(1);
    expect(got[0][1].nodes.size).toBe(fixture("resnet18").nodes.length);
    expect(
      loadGraph(
        raw,
        () => true,
        (read, index) => got.push([read, index]),
      ),
    ).toBe(false); // small
    expect(got).toHaveLength(2);
  });
});

/** A big graph as widget/wire.py graph_pieces sends it: the head (nodes and edges emptied, keys
 * in order), then those lists in slices of `size`, each its own buffer of JSON text. */
function asPieces(doc: Record<string, unknown>, size: number) {
  const slices = (list: unknown[]): DataView[] => {
    const out: DataView[] = [];
    for (let k = 0; k < list.length; k += size) out.push(asBuffer(list.slice(k, k + size)));
    return out;
  };
  return {
    head: asBuffer({ ...doc, nodes: [], edges: [] }),
    nodes: slices(doc.nodes as unknown[]),
    edges: slices(doc.edges as unknown[]),
  };
}

describe("a big graph sent in pieces", () => {
  const doc = document("resnet18") as Record<string, unknown>;

  it("is the same document, keys in order, as the whole parsed at once", () => {
    const pieces = asPieces(doc, 7);
    expect(pieces.nodes.length).toBeGreaterThan(3);
    const got = graphDocument(pieces);
    expect(JSON.stringify(got)).toBe(JSON.stringify(doc));
    expect(readGraph(got)).toEqual(readGraph(doc));
    const whole = asBuffer(doc).byteLength;
    expect(graphBytes(pieces)).toBeGreaterThan(whole - 40); // the head's empty lists, a few brackets more
    expect(graphBytes({ ...pieces, nodes: [1] })).toBe(0); // not pieces: a plain object
  });

  it("is read one piece a task, and a piece that is not JSON is said, as one buffer that is not", async () => {
    const got: ReadGraph[] = [];
    expect(
      loadGraph(
        asPieces(doc, 50),
        () => true,
        (read) => got.push(read),
      ),
    ).toBe(true); // pieces are read over tasks at any size: the kernel sends them for big graphs only
    expect(got).toHaveLength(0);
    for (let wait = 0; wait < 100 && got.length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(got).toHaveLength(1);
    expect(got[0].payload.nodes).toHaveLength(fixture("resnet18").nodes.length);
    expect(got[0].error).toBeNull();
    const broken = { ...asPieces(doc, 50), edges: [new DataView(new TextEncoder().encode("[{oops").buffer)] };
    expect(graphDocument(broken)).toBeInstanceOf(PayloadError);
    const said: ReadGraph[] = [];
    loadGraph(
      broken,
      () => true,
      (r) => said.push(r),
    );
    for (let wait = 0; wait < 100 && said.length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(said[0].error).toMatch(/not JSON text/);
  });
});

/** The pieces deflated, as widget/wire.py sends them (zlib's format: CompressionStream "deflate"
 * writes what Python's zlib.compress does). */
async function deflated(pieces: ReturnType<typeof asPieces>) {
  const deflate = async (b: DataView): Promise<DataView> =>
    new DataView(
      await new Response(
        new Blob([b as DataView<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate")),
      ).arrayBuffer(),
    );
  return {
    head: await deflate(pieces.head),
    nodes: await Promise.all(pieces.nodes.map(deflate)),
    edges: await Promise.all(pieces.edges.map(deflate)),
    deflate: true,
  };
}

describe("a big graph sent in deflated pieces", () => {
  const doc = document("resnet18") as Record<string, unknown>;

  it("inflates to the same document, keys in order, one piece a step", async () => {
    const pieces = await deflated(asPieces(doc, 7));
    expect(graphBytes(pieces)).toBeLessThan(graphBytes(asPieces(doc, 7)) / 3);
    expect(graphDocument(pieces)).toBeInstanceOf(PayloadError); // not parsed before inflating
    let steps = 0;
    const text = await inflatePieces(pieces, async () => ++steps > 0);
    expect(steps).toBe(pieces.nodes.length + pieces.edges.length);
    expect(JSON.stringify(graphDocument(text))).toBe(JSON.stringify(doc));
    // Told to stop (a newer graph came), it stops.
    expect(await inflatePieces(pieces, async () => false)).toBeUndefined();
    // Anything else passes as it is.
    const plain = asPieces(doc, 7);
    expect(await inflatePieces(plain)).toBe(plain);
  });

  it("is read by loadGraph, and a piece that does not inflate is said", async () => {
    const got: ReadGraph[] = [];
    loadGraph(
      await deflated(asPieces(doc, 50)),
      () => true,
      (read) => got.push(read),
    );
    for (let wait = 0; wait < 100 && got.length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(got).toHaveLength(1);
    expect(got[0].error).toBeNull();
    expect(got[0].payload.nodes).toHaveLength(fixture("resnet18").nodes.length);
    expect(got[0].payload.edges).toHaveLength(fixture("resnet18").edges.length);
    const broken = {
      ...(await deflated(asPieces(doc, 50))),
      edges: [new DataView(new TextEncoder().encode("[{oops").buffer)],
    };
    const said: ReadGraph[] = [];
    loadGraph(
      broken,
      () => true,
      (read) => said.push(read),
    );
    for (let wait = 0; wait < 100 && said.length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(said[0].error).toMatch(/does not inflate/);
  });
});

describe("the kernel's view request", () => {
  const index = buildIndex(fixture("nested"));
  const shown = { depth: 0, expanded: [] as string[] };
  const groups = [...index.groups.keys()];

  it("is answered from scratch when new, then only its new edits, once", () => {
    const first = { id: 4, depth: -1, edits: [] };
    const auto = autoDepth(index);
    expect(answerRequest(index, first, [3, 2], () => shown)).toEqual({
      depth: auto,
      expanded: groupsToDepth(index, auto),
      _resolved: [4, 0],
    });
    expect(answerRequest(index, first, [4, 0], () => shown)).toBeNull();
    const more = { ...first, edits: [["all"], ["close", groups[0]]] };
    // Edits after the answer go on top of what is shown now (clicks included).
    expect(answerRequest(index, more, [4, 1], () => shown)).toEqual({
      depth: 0,
      expanded: [],
      _resolved: [4, 2],
    });
    expect(answerRequest(index, { nonsense: true }, null, () => shown)).toBeNull();
  });
});

/** A model as anywidget gives it, over `state`; `seen` lists each key's change events. */
function fakeModel(state: Record<string, unknown>) {
  const seen: string[] = [];
  const model = {
    get: (key: string) => state[key],
    set(key: string, value: unknown) {
      const changed = JSON.stringify(state[key]) !== JSON.stringify(value);
      state[key] = value;
      if (changed) seen.push(`${key}:${answerUndone(model as never)}`); // as a listener sees it
    },
    save_changes() {},
  };
  return { model: model as unknown as AnyModel<WidgetModel>, seen };
}

describe("the kernel's whole state, from before the page's answer", () => {
  const index = buildIndex(fixture("nested"));
  const request = { id: 3, depth: -1, edits: [] };
  // What the kernel holds before the page's answer reaches it (GraphWidget._ask's request).
  const kernelState = () => ({ _request: request, _resolved: [], depth: -1, expanded: [] });

  it("is seen as undoing the answer, and answered again: the same view", () => {
    const { model, seen } = fakeModel(kernelState());
    const shown = () => ({ depth: model.get("depth") as number, expanded: model.get("expanded") as string[] });
    expect(answerUndone(model)).toBe(false); // nothing answered yet: a kernel state undoes nothing
    expect(answerKernel(model, index, shown)).toBe(true);
    const answered = { depth: model.get("depth"), expanded: model.get("expanded") };
    expect(model.get("_resolved")).toEqual([3, 0]);
    expect(seen.filter((s) => s.startsWith("_resolved"))).toEqual(["_resolved:false"]); // its own write
    expect(answerUndone(model)).toBe(false);
    // JupyterLab's widget manager restores every widget's state as the kernel had it.
    for (const [key, value] of Object.entries(kernelState())) model.set(key as never, value as never);
    expect(model.get("expanded")).toEqual([]); // nothing open: what would be drawn
    expect(answerUndone(model)).toBe(true);
    expect(answerKernel(model, index, shown)).toBe(true);
    expect({ depth: model.get("depth"), expanded: model.get("expanded") }).toEqual(answered);
    expect(answerUndone(model)).toBe(false);
    // The kernel's echo of the page's own answer changes nothing.
    model.set("_resolved" as never, [3, 0] as never);
    expect(answerUndone(model)).toBe(false);
  });
});
