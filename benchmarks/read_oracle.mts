// An oracle for the page's read of a graph (round 19b): one line of hashes per case, to diff
// between two trees. Every fixture document, the broken ones (tests/fixtures/broken), lenet in
// pieces with two faults or odd pieces (which error comes first), deflated pieces that do not
// inflate, and any documents named (llama-10k, llama-100k: profile_build.py --save), each read
// as loadGraph reads it (one buffer; plain and deflated pieces; a tree with an inflate worker:
// its pipelined read, with the main thread's inflater), then the index (ids, layer tree,
// membership, calls, entering edges, node ancestors/order/edges/calls), every group's signature,
// the repeated blocks (cached, and fresh on a new index) and the first views (folded, unfolded,
// depth 2): read, index, views hashes and the error message.
//   git archive main | tar -x -C /tmp/main && ln -s $PWD/node_modules /tmp/main/
//   ROOT=/tmp/main npx vite-node benchmarks/read_oracle.mts g10k.json g100k.json > a.txt
//   ROOT=$PWD npx vite-node benchmarks/read_oracle.mts g10k.json g100k.json > b.txt; diff a.txt b.txt
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { deflateSync } from "node:zlib";

const ROOT = process.env.ROOT as string;
const FIX = new URL("../tests/fixtures", import.meta.url).pathname; // this tree's fixtures
const ks = await import(`${ROOT}/js/kernel_sync.ts`);
const { firstView } = await import(`${ROOT}/js/view/first_view.ts`);
const { findRepeats, repeatsOf } = await import(`${ROOT}/js/view/repeats.ts`);
const { createSignatures } = await import(`${ROOT}/js/view/signatures.ts`);
const { buildIndex } = await import(`${ROOT}/js/view/graph_index.ts`);

import { existsSync } from "node:fs";
// The new tree's pipelined read (the worker's, with the main thread's inflater: the same steps).
const here = existsSync(`${ROOT}/js/inflate_worker.ts`)
  ? (await import(`${ROOT}/js/inflate_worker.ts`)).inflateHere
  : null;
const enc = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));
const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Pieces as wire.py makes them: parts as JSON values or raw strings (text that is no JSON). */
function pieces(doc: Record<string, unknown>, size: number, deflate: boolean, edit?: (parts: unknown[][]) => void) {
  const lists: Record<string, unknown[][]> = { nodes: [], edges: [] };
  for (const key of ["nodes", "edges"]) {
    const items = (doc[key] as unknown[]) ?? [];
    for (let k = 0; k < items.length; k += size) lists[key].push(items.slice(k, k + size));
  }
  const head: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) head[k] = k === "nodes" || k === "edges" ? [] : v;
  const parts: { head: unknown; nodes: unknown[]; edges: unknown[] } = { head, nodes: lists.nodes, edges: lists.edges };
  if (edit) edit(parts as never);
  const wire = (v: unknown) => {
    const b = v instanceof Uint8Array ? v : enc(v);
    return dv(deflate ? new Uint8Array(deflateSync(b)) : b);
  };
  return {
    head: wire(parts.head),
    nodes: parts.nodes.map(wire),
    edges: parts.edges.map(wire),
    deflate,
  };
}

const raw = (text: string) => new TextEncoder().encode(text);

function load(value: unknown): Promise<[unknown, unknown]> {
  return new Promise((resolve) =>
    ks.loadGraph(value, () => true, (read: unknown, index: unknown) => resolve([read, index]), 1, () => Promise.resolve(), here),
  );
}

const h = (v: unknown) => createHash("sha256").update(JSON.stringify(v)).digest("hex").slice(0, 16);
const sorted = (xs: Iterable<string | null>) => [...xs];

function indexSummary(index: any, full: boolean): unknown {
  const groups = [...index.groups.keys()];
  const nodeIds = [...index.nodes.keys()];
  const some = full ? nodeIds : nodeIds.filter((_, k) => k % 97 === 0);
  return {
    nodes: nodeIds,
    edges: [...index.edges.keys()],
    childGroups: [...index.childGroups.entries()],
    level: [...index.level.entries()],
    wrapper: index.wrapper,
    maxLevel: index.maxLevel,
    groups: groups.map((g) => [
      g,
      index.ancestors(g),
      index.descendantNodes(g).length,
      h([...index.memberNumbers(g)]),
      index.firstNode(g),
      h(index.calls(g)),
      index.ownNodes(g).length,
      h([...index.enteringGroup(g)]),
      index.groupOrder(g),
    ]),
    own: index.ownNodes(null).length,
    perNode: h(
      some.map((n) => [
        n,
        index.ancestors(n),
        index.nodeOrder(n),
        [...index.enteringNode(n)],
        (index.outEdges.get(n) ?? []).map((e: any) => e.id),
        (index.inEdges.get(n) ?? []).map((e: any) => e.id),
        groups.slice(0, 50).map((g) => index.callOf(g, n)),
      ]),
    ),
    linkEdges: h(index.linkEdges.map((e: any) => e.id)),
    linkEnds: h(JSON.stringify(index.linkEnds, (_k, v) => (ArrayBuffer.isView(v) ? [...(v as any)] : v))),
  };
}

function views(index: any, payload: unknown): unknown {
  const groups = [...index.groups.keys()];
  const sig = createSignatures(index);
  const reps = repeatsOf(index);
  const fresh = findRepeats(buildIndex(payload));
  const runs = (r: any) => r.runs.map((x: any) => x);
  const fv = (w: object) => {
    const v = firstView(index, w);
    return h({ depth: v.depth, expanded: v.expanded, notes: v.notes, vg: v.vg });
  };
  return {
    signatures: h(groups.map((g) => sig(g))),
    repeats: h(runs(reps)),
    fresh: h(runs(fresh)),
    folded: fv({ fold: true }),
    unfolded: fv({ fold: false }),
    depth2: fv({ depth: 2, fold: true }),
  };
}

async function report(name: string, value: unknown, full = true) {
  const [read, index] = (await load(value)) as [any, any];
  const out = {
    read: h({ payload: read.payload, blank: read.blank }),
    error: read.error,
    index: h(indexSummary(index, full)),
    views: h(views(index, read.payload)),
  };
  console.log(`${name}\t${out.read}\t${out.index}\t${out.views}\t${out.error}`);
}

const doc = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const fixtures = [
  ...readdirSync(`${FIX}/graphs`).filter((f) => f.endsWith(".json")).map((f) => `graphs/${f}`),
  ...readdirSync(`${FIX}/graphs/v1`).map((f) => `graphs/v1/${f}`),
  ...readdirSync(`${FIX}/graphs/repeats`).map((f) => `graphs/repeats/${f}`),
];
const forms = (d: any) => ({
  buffer: dv(enc(d)),
  plain7: pieces(d, 7, false),
  deflate7: pieces(d, 7, true),
  deflate1: pieces(d, 1, true),
  plainBig: pieces(d, 20000, false),
});
for (const f of fixtures) {
  for (const [form, value] of Object.entries(forms(doc(`${FIX}/${f}`)))) await report(`${f} ${form}`, value);
}

// The broken documents (each a change of lenet).
const lenet = () => doc(`${FIX}/graphs/lenet.json`);
const setPath = (d: any, path: (string | number)[], value: unknown, del = false) => {
  let cur = d;
  for (const p of path.slice(0, -1)) cur = cur[p];
  const last = path[path.length - 1];
  if (del) delete cur[last];
  else cur[last] = value;
};
const broken = JSON.parse(readFileSync(`${FIX}/broken/graph_documents.json`, "utf8")).cases;
for (const c of broken) {
  const d = lenet();
  for (const [path, value, ...rest] of c.set) setPath(d, path, value, (c as any).delete ?? rest[0]?.delete);
  for (const [form, value] of Object.entries(forms(d))) await report(`broken ${c.name} ${form}`, value);
}

// Two faults (or odd pieces), lenet in pieces of 5: which error comes first.
const NOT_JSON = raw("{not json");
type Parts = { head: any; nodes: unknown[][]; edges: unknown[][] };
const cases: [string, (d: any) => void, (p: Parts) => void][] = [
  ["node piece 1 not JSON + node 0 bad site", (d) => (d.nodes[0].call_site = 9999), (p) => (p.nodes[1] = NOT_JSON as never)],
  ["edge piece 0 not JSON + node 2 tensor out of range", (d) => (d.nodes[2].tensor = 9999), (p) => (p.edges[0] = NOT_JSON as never)],
  ["head not JSON", () => {}, (p) => (p.head = NOT_JSON)],
  ["node piece 2 an object + node 0 bad site", (d) => (d.nodes[0].call_site = 9999), (p) => (p.nodes[2] = { a: 1 } as never)],
  ["node piece 1 a string", () => {}, (p) => (p.nodes[1] = "ab" as never)],
  ["node piece 1 a JSON string", () => {}, (p) => (p.nodes[1] = raw('"ab"') as never)],
  ["edge piece 0 a JSON string + node bad", (d) => (d.nodes[2].tensor = 9999), (p) => (p.edges[0] = raw('"ab"') as never)],
  ["node piece 1 a number", () => {}, (p) => (p.nodes[1] = 5 as never)],
  ["node piece 1 null", () => {}, (p) => (p.nodes[1] = null as never)],
  ["edge piece 1 an object + node bad", (d) => (d.nodes[3].tensor = "x"), (p) => (p.edges[1] = { length: 2 } as never)],
  ["node 0 bad site + edge slot out of range", (d) => { d.nodes[0].call_site = 9999; d.edges[4].slot = 99; }, () => {}],
  ["edge slot out of range + edge 1 bad grad", (d) => { d.edges[6].slot = 99; d.edges[1].grad = 9999; }, () => {}],
  ["bad schema + edge piece not JSON", (d) => (d.schema_version = "9"), (p) => (p.edges[0] = NOT_JSON as never)],
  ["schema 1.0 head", (d) => (d.schema_version = "1.0"), () => {}],
  ["tensors not an array + node piece not JSON", (d) => (d.tensors = 5), (p) => (p.nodes[1] = NOT_JSON as never)],
  ["tensors not an array", (d) => (d.tensors = 5), () => {}],
  ["sites bad + node bad", (d) => { d.sites = [[1]]; d.nodes[0].call_site = 99; }, () => {}],
  ["duplicate node id + node piece not JSON", (d) => (d.nodes[3].id = d.nodes[1].id), (p) => (p.nodes[1] = NOT_JSON as never)],
  ["duplicate node id + edge numeric slot", (d) => { d.nodes[3].id = d.nodes[1].id; d.edges[2].slot = 0; }, () => {}],
  ["node diff bad + edge stats bad", (d) => { d.nodes[4].diff = { status: "x" }; d.edges[0].stats = [1]; }, () => {}],
  ["node inputs not an array", (d) => (d.nodes[6].inputs = 3), () => {}],
  ["empty node piece", () => {}, (p) => p.nodes.splice(1, 0, [])],
  ["no node pieces", (d) => { d.nodes = []; d.edges = []; }, () => {}],
  ["no edge pieces", (d) => { d.edges = []; }, () => {}],
  ["head without nodes key", () => {}, (p) => { delete p.head.nodes; }],
  ["head nodes not an array", () => {}, (p) => { p.head.nodes = 5; }],
  ["head edges an object", () => {}, (p) => { p.head.edges = {}; }],
  ["node piece an array of nulls", () => {}, (p) => (p.nodes[1] = [null, null])],
  ["node piece of numbers + edge piece not JSON", () => {}, (p) => { p.nodes[0] = [1, 2]; p.edges[1] = NOT_JSON as never; }],
  ["head a list", () => {}, (p) => (p.head = [1])],
  ["head null", () => {}, (p) => (p.head = null)],
  ["node group missing + node piece 2 not JSON", (d) => (d.nodes[1].group = "nope"), (p) => (p.nodes[2] = NOT_JSON as never)],
  ["node bad shape param", (d) => (d.nodes.find((n: any) => n.param).param.shape = "4x4"), () => {}],
  ["edge dangling + node bad site", (d) => { d.edges[0].target = "zz"; d.nodes[5].call_site = 999; }, () => {}],
];
for (const [name, change, edit] of cases) {
  for (const deflate of [false, true]) {
    const d = lenet();
    change(d);
    let value: unknown;
    try {
      value = pieces(d, 5, deflate, edit as never);
    } catch (err) {
      console.log(`two ${name}: cannot make (${(err as Error).message})`);
      continue;
    }
    await report(`two ${name} ${deflate ? "deflated" : "plain"}`, value);
  }
}
// Deflated pieces that do not inflate, with other faults before or after them.
const NOT_DEFLATED = dv(raw("not deflated"));
const TRUNCATED = (b: DataView) => new DataView(b.buffer, b.byteOffset, Math.max(1, b.byteLength - 9));
const inflating: [string, (d: any) => void, (p: any) => void][] = [
  ["node 1 + node 0 bad site", (d) => (d.nodes[0].call_site = 9999), (p) => (p.nodes[1] = NOT_DEFLATED)],
  ["head", () => {}, (p) => (p.head = NOT_DEFLATED)],
  ["head truncated", () => {}, (p) => (p.head = TRUNCATED(p.head))],
  ["last edge piece + node piece 0 not JSON", () => {}, (p) => { p.nodes[0] = dv(deflateSync(raw("{x"))); p.edges[p.edges.length - 1] = NOT_DEFLATED; }],
  ["edge 2 truncated + node 1 not JSON", () => {}, (p) => { p.nodes[1] = dv(deflateSync(raw("{x"))); p.edges[2] = TRUNCATED(p.edges[2]); }],
  ["edge 1 + edge 3 (the first said)", () => {}, (p) => { p.edges[1] = NOT_DEFLATED; p.edges[3] = TRUNCATED(p.edges[3]); }],
  ["node 3 + head not 2.x", () => {}, (p) => { p.head = dv(deflateSync(raw('{"schema_version": "1.0"}'))); p.nodes[3] = NOT_DEFLATED; }],
  ["edge 0 + head null", () => {}, (p) => { p.head = dv(deflateSync(raw("null"))); p.edges[0] = NOT_DEFLATED; }],
  ["edge 0 + head not JSON", () => {}, (p) => { p.head = dv(deflateSync(raw("{"))); p.edges[0] = NOT_DEFLATED; }],
  ["none + head not JSON", () => {}, (p) => { p.head = dv(deflateSync(raw("{"))); }],
  ["none + head 1.0", () => {}, (p) => { p.head = dv(deflateSync(raw('{"schema_version": "1.0"}'))); }],
  ["last edge + edge decode error", (d) => (d.edges[1].grad = 9999), (p) => (p.edges[p.edges.length - 1] = NOT_DEFLATED)],
  ["last edge + duplicate node id", (d) => (d.nodes[3].id = d.nodes[1].id), (p) => (p.edges[p.edges.length - 1] = NOT_DEFLATED)],
  ["empty piece", () => {}, (p) => (p.nodes[1] = new DataView(new ArrayBuffer(0)))],
];
for (const [name, change, edit] of inflating) {
  const d = lenet();
  change(d);
  const p = pieces(d, 5, true);
  edit(p);
  await report(`inflating ${name}`, p);
}

for (const path of process.argv.slice(2)) {
  const d = doc(path);
  await report(`${path} deflate20k`, pieces(d, 20000, true), false);
  if (d.nodes.length < 50000) await report(`${path} buffer`, dv(enc(d)), false);
}
