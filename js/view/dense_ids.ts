// Ids numbered in table order, as graph/codec.py writes them ("n0", "n1", ... for nodes, "e0",
// "e1", ... for edges): such a table's ids are known unique and valid, and an id's position is
// read off the id itself. On a big graph this stands in for a Set or a Map of 100k+ ids, each
// costing a hash-table insertion per id in the page's cold first read (payload_check.ts,
// graph_index.ts). Any other table takes the general path, with the same results.

const ID_START = /^[A-Za-z][A-Za-z0-9_]*$/; // payload_check.ts's ID: the prefix must be one

/** Ids of a table with the prefix P where entry k has the id P + k (k in decimal). */
export interface DenseIds {
  readonly prefix: string;
  readonly count: number;
}

/** Position of `id` in the dense table `ids` (-1: not one of its ids). */
export function denseNumber(ids: DenseIds, id: string): number {
  const { prefix, count } = ids;
  if (typeof id !== "string") return -1; // an unchecked payload's (graph_index.ts takes those too)
  const p = prefix.length;
  const digits = id.length - p;
  if (digits < 1 || digits > 9 || !id.startsWith(prefix)) return -1;
  let k = 0;
  for (let c = p; c < id.length; c++) {
    const d = id.charCodeAt(c) - 48;
    if (d < 0 || d > 9 || (d === 0 && c === p && digits > 1)) return -1; // no sign, no leading 0
    k = k * 10 + d;
  }
  return k < count ? k : -1;
}

/** Tables from this size on are looked at: below it, a Set's insertions (native from the
 * first call) cost less than this file's loops run cold (llama-10k: +17% of readGraph's
 * instructions, callgrind; a 100k table: half the time of its Set). */
export const DENSE_FROM = 50_000;

/** The table's dense ids, or null when some entry's id is not its prefix and position (the
 * caller's general path then checks and maps them), or the table is smaller than `from`. */
export function denseIds(items: readonly { id: unknown }[], from = DENSE_FROM): DenseIds | null {
  const count = items.length;
  const first = count > 0 ? items[0].id : undefined;
  if (count < from || typeof first !== "string" || !first.endsWith("0") || count > 1e9) return null;
  const ids: DenseIds = { prefix: first.slice(0, -1), count };
  if (!ID_START.test(ids.prefix)) return null;
  for (let k = 1; k < count; k++) {
    const id = items[k].id;
    if (typeof id !== "string" || denseNumber(ids, id) !== k) return null;
  }
  return ids;
}

/** A table's ids as a set: the dense ids' own test, else a Set. */
export interface IdSet {
  has(id: string): boolean;
}

export function denseIdSet(ids: DenseIds): IdSet {
  return { has: (id) => denseNumber(ids, id) >= 0 };
}
