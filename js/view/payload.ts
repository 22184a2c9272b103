// The graph document the Python side sends -> the in-memory GraphPayload the view works on.
//
// Schema 2.x (paddleviz_widget/schema/graph.schema.json, written by graph/codec.py) is sparse
// and normalized: tensor descriptions, call sites and each op's slot names sit once in tables
// (`tensors`, `files` + `sites`, `ops`) and nodes, slots and edges refer to them by position;
// null/empty fields, kind "op" and edge index 0 are left out. The view reads every field spelled
// out, as schema 1.0 wrote it (types.ts), so this is the one place that knows the difference.
// 1.0 documents pass through. Pure; one pass over nodes and edges.
import type {
  DiffChange,
  DiffMark,
  GradInfo,
  GradStats,
  GraphEdge,
  GraphGroup,
  GraphNode,
  GraphPayload,
  NodeKind,
  SlotInfo,
} from "./types";
import { checkIds, checkPayloadSteps, checkShape } from "./payload_check";
import { PayloadError } from "./payload_error";

export { PayloadError };

type Json = Record<string, unknown>;
type Tensor = [string | null, number[] | null, string | null];
type Site = { file: string; line: number; function: string | null };
interface SlotName {
  name: string;
  tensor?: string;
}
type Signatures = Record<string, { inputs?: SlotName[]; outputs?: SlotName[] }>;

const UNKNOWN: GradInfo = Object.freeze({ dtype: null, shape: null, place: null });
const TABLES_1 = ["nodes", "edges", "groups"];
const TABLES_2 = [...TABLES_1, "tensors", "files", "sites"];

function describe(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "an array" : typeof value;
}

export function decodePayload(raw: unknown): GraphPayload {
  return run(decodeSteps(raw));
}

/** decodePayload in steps (yields after the nodes are decoded, then before the checks), so
 * that a big graph's reading gives each its own task (kernel_sync.ts loadGraph). */
function* decodeSteps(raw: unknown): Generator<void, GraphPayload> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new PayloadError(`a graph document is a JSON object, not ${describe(raw)}`);
  }
  const doc = raw as Json;
  const version = doc.schema_version;
  if (!["2.3", "2.2", "2.1", "2.0", "1.0"].includes(version as string)) {
    const shown = version === undefined ? "undefined" : JSON.stringify(version);
    const reads = "this widget reads '2.3', '2.2', '2.1', '2.0' and '1.0'";
    // "2.4", "3.0", "9": a newer paddleviz_widget's (graph/decode.py says the same)
    const [major, minor] = `${String(version)}.0`.split(".").map((x) => (/^\d+$/.test(x) ? Number(x) : Number.NaN));
    const newer = typeof version === "string" && (major > 2 || (major === 2 && minor > 3));
    throw new PayloadError(
      newer
        ? `graph schema_version ${shown} is a newer paddleviz_widget's (${reads}): upgrade it (pip install -U paddleviz_widget)`
        : `unknown graph schema_version ${shown}: ${reads}; this is not a graph document paddleviz_widget wrote`,
    );
  }
  for (const key of version === "1.0" ? TABLES_1 : TABLES_2) {
    if (!Array.isArray(doc[key])) {
      throw new PayloadError(`malformed schema ${version} graph document: "${key}" is not an array`);
    }
  }
  const malformed = (err: unknown): PayloadError => malformedIn(version, err);
  let payload: GraphPayload;
  try {
    payload = version === "1.0" ? (doc as unknown as GraphPayload) : yield* decodeV2(doc);
  } catch (err) {
    throw malformed(err);
  }
  yield;
  try {
    // A 2.x document's shapes of tensors, slots and gradients are its tensor table's, checked above.
    yield* checkPayloadSteps(payload, STEP_ITEMS, version !== "1.0");
  } catch (err) {
    throw malformed(err);
  }
  return payload;
}

/** Drain a generator of steps at once. */
function run<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

function malformedIn(version: unknown, err: unknown): PayloadError {
  return err instanceof PayloadError
    ? err
    : new PayloadError(`malformed schema ${version} graph document: ${(err as Error).message}`);
}

/** A 2.x document read list by list: its nodes' lists, then its edges', as a big graph's
 * pieces are parsed (kernel_sync.ts). Each takes a list or, once one failed, nothing more; the
 * first error is kept and said by `done`, which decodes the groups and checks the payload.
 * Errors and their order are decodeSteps' on the document with the lists put back. */
export interface ListReader {
  nodes(list: readonly Json[]): Generator<void, void>;
  edges(list: readonly Json[]): Generator<void, void>;
  done(): Generator<void, ReadResult>;
}

const V2 = ["2.3", "2.2", "2.1", "2.0"];

/** The reader of `head` (a 2.x document without its nodes and edges), or null when `head` is
 * not a 2.x document's object: the caller then puts the lists back and reads it whole. */
export function listReader(head: unknown): ListReader | null {
  if (head === null || typeof head !== "object" || Array.isArray(head)) return null;
  const doc = head as Json;
  const version = doc.schema_version;
  if (!V2.includes(version as string)) return null;
  let failed: PayloadError | null = null;
  let decoder: V2Decoder | null = null;
  try {
    // decodeSteps' checks of the tables but "nodes" and "edges" (lists, once put back).
    for (const key of TABLES_2) {
      if (key !== "nodes" && key !== "edges" && !Array.isArray(doc[key])) {
        throw new PayloadError(`malformed schema ${version} graph document: "${key}" is not an array`);
      }
    }
    decoder = v2Decoder(doc);
  } catch (err) {
    failed = malformedIn(version, err);
  }
  function* guarded(steps: (d: V2Decoder) => Generator<void, void>): Generator<void, void> {
    if (failed !== null || decoder === null) return;
    try {
      yield* steps(decoder);
    } catch (err) {
      failed = malformedIn(version, err);
    }
  }
  const said = (err: PayloadError): ReadResult => ({
    payload: EMPTY_PAYLOAD,
    error: `Cannot show this graph: ${err.message}`,
    blank: false,
  });
  return {
    nodes: (list) => guarded((d) => d.nodes(list)),
    edges: (list) => guarded((d) => d.edges(list)),
    *done() {
      if (failed !== null || decoder === null) return said(failed as PayloadError);
      let payload: GraphPayload;
      try {
        payload = decoder.finish();
      } catch (err) {
        return said(malformedIn(version, err));
      }
      yield;
      try {
        yield* checkPayloadSteps(payload, STEP_ITEMS, true);
      } catch (err) {
        return said(malformedIn(version, err));
      }
      return { payload, error: null, blank: false };
    },
  };
}

export const EMPTY_PAYLOAD: GraphPayload = { schema_version: "2.0", nodes: [], edges: [], groups: [] };

export type ReadResult = { payload: GraphPayload; error: string | null; blank: boolean };

/** The widget's synced `graph` trait for the view: nothing yet (an empty object: `blank`, e.g.
 * the placeholder GraphWidget(y) opens its comm with) is the empty graph; a document it cannot
 * read is the empty graph and a message that says why. */
export function readGraph(raw: unknown): ReadResult {
  return run(readGraphSteps(raw));
}

/** readGraph in steps (each yield: a task's worth of work done on a big graph). */
export function* readGraphSteps(raw: unknown): Generator<void, ReadResult> {
  if (raw instanceof PayloadError)
    return { payload: EMPTY_PAYLOAD, error: `Cannot show this graph: ${raw.message}`, blank: false };
  const blank = raw === null || raw === undefined || (typeof raw === "object" && Object.keys(raw).length === 0);
  if (blank) return { payload: EMPTY_PAYLOAD, error: null, blank };
  try {
    return { payload: yield* decodeSteps(raw), error: null, blank };
  } catch (err) {
    return { payload: EMPTY_PAYLOAD, error: `Cannot show this graph: ${(err as Error).message}`, blank };
  }
}

function inRange(table: readonly unknown[], k: unknown): k is number {
  return typeof k === "number" && Number.isInteger(k) && k >= 0 && k < table.length;
}

/** The error for a reference `k` that is not in `table`: "<where> index <k> is out of range".
 * Callers build `where` only then (building its text for every reference costs more than all
 * the rest of decoding), and look entries up inline: this runs once per node, edge and slot of
 * the first paint, mostly before the JIT has warmed up. */
function outOfRange(table: readonly unknown[], k: unknown, where: string): PayloadError {
  const shown = k === undefined ? "undefined" : JSON.stringify(k);
  return new PayloadError(`${where} index ${shown} is out of range (table has ${table.length})`);
}

/** [norm, max_abs, mean_abs, zero_fraction, nan, inf] (schema 2.1) as named fields. */
function readStats(raw: unknown, id: unknown): GradStats {
  if (!Array.isArray(raw) || raw.length !== 6 || !raw.every((v) => typeof v === "number")) {
    throw new PayloadError(`edge ${String(id)}: stats is not [norm, max_abs, mean_abs, zero_fraction, nan, inf]`);
  }
  const [norm, max_abs, mean_abs, zero_fraction, nan, inf] = raw as number[];
  return { norm, max_abs, mean_abs, zero_fraction, nan, inf };
}

function readSites(doc: Json): Site[] {
  const files = doc.files as string[];
  return (doc.sites as unknown[]).map((site, k) => {
    if (!Array.isArray(site) || site.length !== 3)
      throw new PayloadError(`sites[${k}]: expected [file, line, function]`);
    const f: unknown = site[0];
    if (!inRange(files, f)) throw outOfRange(files, f, `sites[${k}]: file`);
    return { file: files[f], line: site[1] as number, function: site[2] as string | null };
  });
}

const NO_SLOTS: readonly SlotName[] = [];
const STATUSES = new Set(["added", "removed", "changed"]);

/** Schema 2.2's diff mark (a diff of two graphs), checked: {status, changes?}. */
function readDiff(raw: unknown, owner: string, id: unknown): DiffMark {
  const mark = raw as { status?: unknown; changes?: unknown } | null;
  const changes = mark?.changes ?? [];
  if (mark === null || typeof mark !== "object" || !STATUSES.has(mark.status as string) || !Array.isArray(changes)) {
    throw new PayloadError(`${owner} ${String(id)}: diff is not {status: added|removed|changed, changes}`);
  }
  return { status: mark.status as DiffMark["status"], changes: changes as DiffChange[] };
}

/** Nodes or edges decoded or checked between two yields (a big graph's reading gives each
 * step a task or part of one: kernel_sync.ts loadGraph). */
export const STEP_ITEMS = 20_000;

/** The 2.x document decoded (a yield after the nodes and every STEP_ITEMS nodes or edges). */
function* decodeV2(doc: Json): Generator<void, GraphPayload> {
  const decoder = v2Decoder(doc);
  yield* decoder.nodes(doc.nodes as Json[]);
  yield;
  yield* decoder.edges(doc.edges as Json[]);
  return decoder.finish();
}

/** A 2.x document's decoder, its tables read at once, then its nodes and its edges taken list
 * by list, in order (all the nodes before any edge), as they come: the lists of a big graph's
 * pieces (piece_read.ts) decoded as each is parsed, then dropped, rather than a whole parsed
 * document kept alive beside the decoded one. The same payload, errors and order as decodeV2's
 * one pass over the whole lists. */
export interface V2Decoder {
  nodes(list: readonly Json[]): Generator<void, void>;
  edges(list: readonly Json[]): Generator<void, void>;
  /** The groups decoded, and the payload. */
  finish(): GraphPayload;
}

function v2Decoder(doc: Json): V2Decoder {
  // One frozen description per table entry, shared by every reference to it (the view only
  // reads them; a 10k-node graph with slots has ~50k references).
  const tensors = (doc.tensors as unknown[]).map((t, k): GradInfo => {
    if (!Array.isArray(t) || t.length !== 3) throw new PayloadError(`tensors[${k}]: expected [dtype, shape, place]`);
    const [dtype, shape, place] = t as Tensor;
    checkShape(shape, `tensors[${k}][1]`);
    return Object.freeze({ dtype, shape: shape === null ? null : (Object.freeze([...shape]) as number[]), place });
  });
  /** The tensor `k` refers to (null for none); `owner` names the referrer in an error. */
  const grad = (k: unknown, owner: string, id: unknown): GradInfo | null => {
    if (k === null || k === undefined) return null;
    if (inRange(tensors, k)) return tensors[k];
    throw outOfRange(tensors, k, `${owner} ${String(id)}: tensor`);
  };
  const sites = readSites(doc);
  const ops = (doc.ops ?? {}) as Signatures;

  const slots = (n: Json, side: "inputs" | "outputs"): SlotInfo[] => {
    const entries = n[side] as unknown[] | null | undefined;
    if (entries === undefined || entries === null) return [];
    if (!Array.isArray(entries)) throw new PayloadError(`node ${String(n.id)}: "${side}" is not an array`);
    const op = n.name as string;
    const signature = (Object.prototype.hasOwnProperty.call(ops, op) ? ops[op][side] : undefined) ?? NO_SLOTS;
    const out: SlotInfo[] = [];
    for (let j = 0; j < entries.length; j++) {
      const entry = entries[j];
      const spelled = entry !== null && typeof entry === "object";
      let named: SlotName;
      if (spelled) named = entry as SlotName;
      else if (inRange(signature, j)) named = signature[j];
      else
        throw outOfRange(signature, j, `node ${String(n.id)} ${side}[${j}]: ops[${JSON.stringify(op)}].${side} slot`);
      const k = spelled ? (entry as { grad?: number }).grad : entry;
      let g = UNKNOWN;
      if (k !== null && k !== undefined) {
        if (!inRange(tensors, k)) throw outOfRange(tensors, k, `node ${String(n.id)} ${side}[${j}]: tensor`);
        g = tensors[k];
      }
      out.push({ name: named.name, tensor: named.tensor ?? null, dtype: g.dtype, shape: g.shape, place: g.place });
    }
    return out;
  };

  const nodes: GraphNode[] = [];
  function* decodeNodes(nodesIn: readonly Json[]): Generator<void, void> {
    for (let j = 0; j < nodesIn.length; j++) {
      const n = nodesIn[j];
      const p = n.param as { name: string; shape?: number[]; dtype?: string } | undefined;
      const s: unknown = n.call_site;
      let site: Site | null = null;
      if (s !== undefined) {
        if (!inRange(sites, s)) throw outOfRange(sites, s, `node ${String(n.id)}: site`);
        const known = sites[s];
        site = { file: known.file, line: known.line, function: known.function };
      }
      const node: GraphNode = {
        id: n.id as string,
        name: n.name as string,
        ptr: n.ptr as string,
        kind: (n.kind as NodeKind | undefined) ?? "op",
        group: (n.group as string | undefined) ?? null,
        param: p === undefined ? null : { name: p.name, shape: p.shape ? [...p.shape] : null, dtype: p.dtype ?? null },
        call_site: site,
        inputs: slots(n, "inputs"),
        outputs: slots(n, "outputs"),
        tensor: grad(n.tensor, "node", n.id),
      };
      // 2.1's fields only where present: a 2.x graph without them decodes like its 1.0 twin.
      // (Set after, not spread in: a spread per node costs more than the rest in cold code.)
      if (n.grad_status !== undefined) node.grad_status = n.grad_status as "zero" | "none";
      if (n.diff !== undefined) node.diff = readDiff(n.diff, "node", n.id);
      nodes.push(node);
      if (nodes.length % STEP_ITEMS === 0) yield;
    }
  }

  // Output slots per node id, for edges that name theirs by position (built on first use).
  let outputs: Map<string, SlotInfo[]> | null = null;
  const edges: GraphEdge[] = [];
  function* decodeEdges(edgesIn: readonly Json[]): Generator<void, void> {
    for (let j = 0; j < edgesIn.length; j++) {
      const e = edgesIn[j];
      const k = edges.length; // the edge's position in the whole list (its error names it)
      const source = e.source as string;
      let slot = (e.slot as string | number | undefined) ?? null;
      if (typeof slot === "number") {
        if (outputs === null) {
          checkIds(nodes, "nodes"); // a repeated id would make the slot below another node's
          outputs = new Map(nodes.map((n) => [n.id, n.outputs ?? []] as const));
        }
        const named = outputs.get(source);
        if (named === undefined)
          throw new PayloadError(`edges[${k}].source: ${JSON.stringify(source)} is not the id of a node`);
        if (!inRange(named, slot)) throw outOfRange(named, slot, `edge ${String(e.id)}: slot (outputs of ${source})`);
        slot = named[slot].name;
      }
      const edge: GraphEdge = {
        id: e.id as string,
        source,
        target: e.target as string,
        index: (e.index as number | undefined) ?? 0,
        grad: grad(e.grad, "edge", e.id),
        slot,
      };
      if (e.stats !== undefined) edge.stats = readStats(e.stats, e.id);
      if (e.diff !== undefined) edge.diff = readDiff(e.diff, "edge", e.id);
      if (typeof e.no_stats === "string") edge.no_stats = e.no_stats;
      edges.push(edge);
      if (edges.length % STEP_ITEMS === 0) yield;
    }
  }

  const finish = (): GraphPayload => {
    const groupsIn = doc.groups as Json[];
    const groups: GraphGroup[] = [];
    for (let k = 0; k < groupsIn.length; k++) {
      const g = groupsIn[k];
      groups.push({
        id: g.id as string,
        name: g.name as string,
        type: g.type as string,
        parent: (g.parent as string | undefined) ?? null,
      });
    }
    return { schema_version: "2.0", nodes, edges, groups, meta: (doc.meta ?? {}) as Json };
  };
  return { nodes: decodeNodes, edges: decodeEdges, finish };
}
