// What a decoded graph must be before the view draws it: the same rules as the Python side's
// graph/check.py (one rule each side: string ids, unique; edges, node groups and group parents
// that point at ids that exist; a group tree without cycles; shapes that are lists of integers).
// Tested on the same broken documents (tests/fixtures/broken/graph_documents.json). Loops only.
import { denseIdSet, denseIds, type IdSet } from "./dense_ids";
import { checkSources } from "./grad_source";
import { PayloadError } from "./payload_error";
import type { GraphPayload } from "./types";

const ID = /^[A-Za-z][A-Za-z0-9_]*$/;

function bad(field: string, problem: string): PayloadError {
  return new PayloadError(`${field}: ${problem}`);
}

/** The ids of `table` as a set; throws naming the first one that is not an id or repeats. */
export function checkIds(items: readonly { id: unknown }[], table: string): IdSet {
  const dense = denseIds(items); // unique and valid ids: nothing to throw, no Set to fill
  if (dense !== null) return denseIdSet(dense);
  const seen = new Set<string>();
  for (let k = 0; k < items.length; k++) {
    const id = items[k].id;
    if (typeof id !== "string" || !ID.test(id)) throw bad(`${table}[${k}].id`, `${JSON.stringify(id)} is not an id`);
    if (seen.has(id)) throw bad(`${table}[${k}].id`, `"${id}" is the id of an earlier entry too`);
    seen.add(id);
  }
  return seen;
}

/** Throws unless `value` is null or a list of integers (a tensor's shape). */
export function checkShape(value: unknown, field: string): void {
  if (!isShape(value)) {
    throw bad(field, `${JSON.stringify(value)} is not a list of integers`);
  }
}

function isShape(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (!Array.isArray(value)) return false;
  for (let k = 0; k < value.length; k++) if (!Number.isInteger(value[k])) return false;
  return true;
}

/** Throws a PayloadError naming the first field of `graph` that breaks the schema. */
export function checkPayload(graph: GraphPayload): void {
  const steps = checkPayloadSteps(graph, Number.POSITIVE_INFINITY);
  while (!steps.next().done);
}

/** checkPayload in steps (a yield every `stepItems` nodes or edges, and between the tables),
 * in the same order: the same first error. `tableShapes`: the shapes of tensors, slots and
 * gradients are a checked tensor table's (a decoded 2.x document), not looked at again.
 * Plain loops, and a field's path spelled out only for its error: this runs once on every
 * group, node and edge of a big graph in the page's main thread, before the JIT has warmed up. */
export function* checkPayloadSteps(graph: GraphPayload, stepItems: number, tableShapes = false): Generator<void, void> {
  const groups = checkIds(graph.groups, "groups");
  const parent = new Map<string, string | null>();
  const groupList = graph.groups;
  for (let k = 0; k < groupList.length; k++) {
    const g = groupList[k];
    if (typeof g.name !== "string") throw bad(`groups[${k}].name`, "is not a string");
    const p = g.parent ?? null;
    if (p !== null && (typeof p !== "string" || !groups.has(p)))
      throw bad(`groups[${k}].parent`, `${JSON.stringify(p)} is not the id of a group`);
    parent.set(g.id, p);
  }
  // Each group's way up, until a group already known to reach the top: seen on this way, a cycle.
  const done = new Set<string>();
  const onWay = new Map<string, number>(); // group id -> the last k whose way passed it
  const path: string[] = [];
  for (let k = 0; k < groupList.length; k++) {
    const g = groupList[k];
    path.length = 0;
    for (let cur: string | null = g.id; cur !== null && !done.has(cur); cur = parent.get(cur) ?? null) {
      if (onWay.get(cur) === k) throw bad(`groups[${k}].parent`, `group "${g.id}" is its own ancestor`);
      onWay.set(cur, k);
      path.push(cur);
    }
    for (let j = 0; j < path.length; j++) done.add(path[j]);
  }
  const nodes = checkIds(graph.nodes, "nodes");
  yield;
  const nodeList = graph.nodes;
  for (let k = 0; k < nodeList.length; k++) {
    const n = nodeList[k];
    if (typeof n.name !== "string" || n.name === "") throw bad(`nodes[${k}].name`, "is not a non-empty string");
    const g = n.group ?? null;
    if (g !== null && (typeof g !== "string" || !groups.has(g)))
      throw bad(`nodes[${k}].group`, `${JSON.stringify(g)} is not the id of a group`);
    if (n.param && !isShape(n.param.shape)) checkShape(n.param.shape, `nodes[${k}].param.shape`);
    if (!tableShapes) {
      if (n.tensor && !isShape(n.tensor.shape)) checkShape(n.tensor.shape, `nodes[${k}].tensor.shape`);
      checkSlots(n.inputs, `nodes[${k}].inputs`);
      checkSlots(n.outputs, `nodes[${k}].outputs`);
    }
    if (k % stepItems === stepItems - 1) yield;
  }
  yield;
  checkIds(graph.edges, "edges");
  const edgeList = graph.edges;
  for (let k = 0; k < edgeList.length; k++) {
    const e = edgeList[k];
    if (typeof e.source !== "string" || !nodes.has(e.source)) throw dangling(k, "source", e.source);
    if (typeof e.target !== "string" || !nodes.has(e.target)) throw dangling(k, "target", e.target);
    if (!tableShapes && e.grad && !isShape(e.grad.shape)) checkShape(e.grad.shape, `edges[${k}].grad.shape`);
    if (k % stepItems === stepItems - 1) yield;
  }
  checkSources(graph, bad);
}

function checkSlots(slots: readonly { shape: unknown }[] | undefined, field: string): void {
  if (!slots) return;
  for (let j = 0; j < slots.length; j++) {
    if (!isShape(slots[j].shape)) checkShape(slots[j].shape, `${field}[${j}].shape`);
  }
}

function dangling(k: number, end: string, value: unknown): PayloadError {
  return bad(`edges[${k}].${end}`, `${JSON.stringify(value)} is not the id of a node`);
}
