// The index's tables for drawing one view without visiting the whole graph (visible.ts): each
// group's own nodes, and the edges entering each node and each group from outside it. Built
// once per payload on first use, over integer arrays (graph_index.ts numbers nodes and groups).
import type { GraphEdge } from "./types";

/** The edges between two known nodes, in `edges` order, by node number. */
export interface EdgeEnds {
  from: Int32Array;
  to: Int32Array;
  m: number;
  edgeAt: GraphEdge[];
}

/** `numberOf`: a node id's number (-1: not a node's id). */
export function nodeEdges(edges: ReadonlyMap<string, GraphEdge>, numberOf: (id: string) => number): EdgeEnds {
  const from = new Int32Array(edges.size);
  const to = new Int32Array(edges.size);
  const edgeAt: GraphEdge[] = [];
  let m = 0;
  for (const e of edges.values()) {
    const s = numberOf(e.source);
    const t = numberOf(e.target);
    if (s < 0 || t < 0) continue;
    from[m] = s;
    to[m] = t;
    edgeAt.push(e);
    m += 1;
  }
  return { from, to, m, edgeAt };
}

export interface Links {
  /** Ids of the nodes whose innermost group is number `a` (-1: none; < -1: unknown group). */
  ownNodes(a: number): readonly string[];
  /** Edge positions into node number `i` / into group number `a` from outside it. */
  enteringNode(i: number): Int32Array;
  enteringGroup(a: number): Int32Array;
}

interface LinkInput {
  ids: readonly string[]; // node ids by number
  groupOf: Int32Array; // innermost group number per node (ids.length of them), -1: none
  parentNum: Int32Array; // parent group number per group, -1: none
  depth: Int32Array; // chain length per group (1 for a top-level group)
  ends: EdgeEnds;
}

/** Compressed lists: items of key k are at[start[k] .. start[k + 1]), in the order added. */
type Table = { start: Int32Array; at: Int32Array };

/** Pairs p < n: item itemAt[p] (p itself if null) under key keyAt[p] + shift, by key (a
 * counting sort). */
function table(keys: number, n: number, keyAt: ArrayLike<number>, itemAt: ArrayLike<number> | null, shift = 0): Table {
  const start = new Int32Array(keys + 1);
  for (let p = 0; p < n; p++) start[keyAt[p] + shift + 1] += 1;
  for (let k = 0; k < keys; k++) start[k + 1] += start[k];
  const at = new Int32Array(n);
  const fill = start.slice(0, keys);
  for (let p = 0; p < n; p++) at[fill[keyAt[p] + shift]++] = itemAt === null ? p : itemAt[p];
  return { start, at };
}

export function buildLinks({ ids, groupOf, parentNum, depth, ends }: LinkInput): Links {
  const groups = parentNum.length;
  const { from, to, m } = ends;
  // Own nodes: key a + 1 (0 for nodes in no group); the items are node numbers.
  let own: Table | null = null;
  const ownIds = new Map<number, string[]>();
  // Into each node: key the target; into each group: every group around the target up to (not
  // including) the innermost one around the source too.
  let intoNode: Table | null = null;
  let intoGroup: Table | null = null;
  const slice = (t: Table, k: number): Int32Array =>
    k < 0 || k + 1 >= t.start.length ? new Int32Array(0) : t.at.subarray(t.start[k], t.start[k + 1]);
  return {
    ownNodes: (a) => {
      if (a < -1) return [];
      let list = ownIds.get(a);
      if (list === undefined) {
        own ??= table(
          groups + 1,
          ids.length,
          groupOf.map((g) => g + 1),
          null,
        );
        list = Array.from(slice(own, a + 1), (i) => ids[i]);
        ownIds.set(a, list);
      }
      return list;
    },
    enteringNode: (i) => {
      intoNode ??= table(ids.length, m, to, null);
      return slice(intoNode, i);
    },
    enteringGroup: (a) => {
      if (intoGroup === null) {
        // Twice over the edges: counting the (group, edge) pairs, then listing them.
        let key = new Int32Array(0);
        let edge = new Int32Array(0);
        const walk = (fill: boolean): number => {
          let p = 0;
          for (let k = 0; k < m; k++) {
            let t = groupOf[to[k]];
            let s = groupOf[from[k]];
            if (t === s) continue; // the same groups around both ends
            let dt = t < 0 ? 0 : depth[t];
            let ds = s < 0 ? 0 : depth[s];
            for (; ds > dt; ds--) s = parentNum[s];
            for (; dt > ds; dt--, t = parentNum[t], p++) {
              if (fill) {
                key[p] = t;
                edge[p] = k;
              }
            }
            for (; t !== s; t = parentNum[t], s = parentNum[s], p++) {
              if (fill) {
                key[p] = t;
                edge[p] = k;
              }
            }
          }
          return p;
        };
        const pairs = walk(false);
        key = new Int32Array(pairs);
        edge = new Int32Array(pairs);
        walk(true);
        intoGroup = table(groups, pairs, key, edge);
      }
      return slice(intoGroup, a);
    },
  };
}
