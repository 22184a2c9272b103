// Which layer groups are open: depth presets, the default depth, the kernel's requests, and
// which visible element stands for each node. Pure. The only implementation of these rules:
// the kernel (paddleviz_widget/widget.py) asks for a depth and the browser resolves it.
import { isProgramGroup } from "./program_groups";
import { heldGroups } from "./folding";
import { instanceId, type GraphIndex } from "./graph_index";
import { repeatsOf } from "./repeats";

/** Visible-node budget of the default view: deeper levels open only while it holds. */
export const DEFAULT_NODE_BUDGET = 150;

/** Group ids whose level is below `depth` (depth 0: everything collapsed), payload order.
 * `fold`: repeated blocks are folded, and their members stay closed (folding.heldGroups). */
export function groupsToDepth(index: GraphIndex, depth: number, fold = false): string[] {
  const held = heldGroups(index, fold);
  return [...index.groups.keys()].filter(
    (id) => (index.level.get(id) ?? 0) < depth && !held.has(id) && !isProgramGroup(index.groups.get(id)),
  );
}

/**
 * The visible element standing for node (or group) `id`: the outermost collapsed group that
 * encloses it (the call of it that holds `id`, see GraphIndex.calls), or `id` itself when
 * every enclosing group is expanded.
 */
export function representative(index: GraphIndex, expanded: ReadonlySet<string>, id: string): string {
  return representer(index, expanded)(id);
}

/**
 * representative() for many ids against one expanded set (which must not change meanwhile).
 * Ids with the same ancestors look for their outermost collapsed group once.
 */
export function representer(index: GraphIndex, expanded: ReadonlySet<string>): (id: string) => string {
  // Position of the outermost collapsed group in each chain (known by its innermost group),
  // -1 for none.
  const closedIn = new Map<string, number>();
  return (id) => {
    const chain = index.ancestors(id);
    if (chain.length === 0) return id;
    let closed = closedIn.get(chain[0]);
    if (closed === undefined) {
      closed = -1;
      for (let i = chain.length - 1; i >= 0; i--) {
        if (!expanded.has(chain[i])) {
          closed = i;
          break;
        }
      }
      closedIn.set(chain[0], closed);
    }
    if (closed < 0) return id;
    const group = chain[closed];
    // One node per call of the closed group: the call this node (or group) is part of.
    const probe = index.nodes.has(id) ? id : index.firstNode(id);
    return probe === undefined ? group : instanceId(group, index.callOf(group, probe));
  };
}

/** Number of visible nodes (real nodes plus collapsed groups) for an expanded set. */
export function visibleNodeCount(index: GraphIndex, expanded: ReadonlySet<string>): number {
  const seen = new Set<string>();
  const rep = representer(index, expanded);
  for (const id of index.nodes.keys()) seen.add(rep(id));
  return seen.size;
}

/** Deepest depth whose picture has at most `budget` visible nodes (0 if even that is more).
 * `fold`: with repeated blocks folded (groupsToDepth). */
export function autoDepth(index: GraphIndex, budget: number = DEFAULT_NODE_BUDGET, fold = false): number {
  // At depth d every group above level d is open, so what shows is each node whose own
  // group is above level d (or that has none) plus one node per call of each group at level
  // d: one pass over the nodes, then only the calls of the levels it looks at. Folded, a run
  // whose members are at level d or above shows as one node, and what is inside it not at all.
  const held = heldGroups(index, fold);
  const folded = (g: string): boolean => held.has(g) || index.ancestors(g).some((a) => held.has(a));
  const hidden = new Set([...index.groups.keys()].filter(folded));
  const runsBy = new Map<number, number>(); // outermost runs per level of their members
  for (const run of fold ? repeatsOf(index).runs : []) {
    if (run.parent !== null && hidden.has(run.parent)) continue;
    const l = index.level.get(run.members[0]) ?? 0;
    runsBy.set(l, (runsBy.get(l) ?? 0) + 1);
  }
  const own = new Map<number, number>(); // nodes per level of their own group
  const byLevel = new Map<number, string[]>();
  for (const [id, l] of index.level) {
    if (hidden.has(id)) continue;
    const list = byLevel.get(l);
    if (list) list.push(id);
    else byLevel.set(l, [id]);
  }
  for (const node of index.nodes.values()) {
    if (node.group != null && hidden.has(node.group)) continue;
    const l = node.group == null ? -2 : (index.level.get(node.group) ?? -2);
    own.set(l, (own.get(l) ?? 0) + 1);
  }
  let above = (own.get(-2) ?? 0) + (own.get(-1) ?? 0);
  let runs = 0; // runs drawn as one node: their parent is open, so their level is <= depth
  let best = 0;
  for (let depth = 1; depth <= index.maxLevel + 1; depth++) {
    above += own.get(depth - 1) ?? 0;
    runs += (depth === 1 ? (runsBy.get(0) ?? 0) : 0) + (runsBy.get(depth) ?? 0);
    let shown = above + runs;
    for (const g of byLevel.get(depth) ?? []) shown += index.calls(g).length;
    if (shown > budget) break;
    best = depth;
  }
  return best;
}

/** The depth the open groups amount to (`synced` if it fits), or null. */
export function depthShown(index: GraphIndex, open: readonly string[], synced: number, fold = false): number | null {
  const key = open.join(",");
  const candidates = [Math.min(synced, index.maxLevel + 1), ...Array.from({ length: index.maxLevel + 2 }, (_, d) => d)];
  return candidates.find((d) => d >= 0 && groupsToDepth(index, d, fold).join(",") === key) ?? null;
}

/** Keep known group ids only, once each, in payload order. */
export function normalizeExpanded(index: GraphIndex, ids: Iterable<string>): string[] {
  const wanted = new Set(ids);
  return [...index.groups.keys()].filter((id) => wanted.has(id));
}

/** Open group `id` and every group around it, so that it actually shows. */
export function expandGroup(index: GraphIndex, expanded: Iterable<string>, id: string): string[] {
  return normalizeExpanded(index, [...expanded, id, ...index.ancestors(id)]);
}

/** Close group `id`; the groups inside keep their state for when it is opened again. */
export function collapseGroup(index: GraphIndex, expanded: Iterable<string>, id: string): string[] {
  return normalizeExpanded(
    index,
    [...expanded].filter((g) => g !== id),
  );
}

/** Open just enough groups to show node or group `id` (itself stays as it is). */
export function reveal(index: GraphIndex, expanded: Iterable<string>, id: string): string[] {
  return normalizeExpanded(index, [...expanded, ...index.ancestors(id)]);
}

/** An edit the kernel made after its depth request (GraphWidget._request.edits). */
export type PendingEdit = unknown;

/** The kernel's view request (GraphWidget._request; the protocol: js/kernel_sync.ts). */
export interface ViewRequest {
  id: number;
  depth: number;
  edits: readonly PendingEdit[];
}

export interface ViewState {
  depth: number;
  expanded: string[];
}

/** The request in a synced value, or null if it is not one. */
export function readRequest(value: unknown): ViewRequest | null {
  const r = value as Partial<ViewRequest> | null;
  if (!r || typeof r.id !== "number" || typeof r.depth !== "number") return null;
  return { id: r.id, depth: r.depth, edits: Array.isArray(r.edits) ? r.edits : [] };
}

/**
 * The kernel's edits, in order, on top of `state`: ["open", id] (with the groups around it),
 * ["close", id], ["set", ids], ["all"] (every group; the depth becomes the deepest).
 * Unknown groups and malformed edits are skipped.
 */
export function applyEdits(
  index: GraphIndex,
  state: ViewState,
  edits: readonly PendingEdit[],
  fold = false,
): ViewState {
  let { depth, expanded } = state;
  for (const edit of edits) {
    const [op, arg] = Array.isArray(edit) ? edit : [];
    if (op === "all") {
      depth = index.maxLevel + 1;
      expanded = groupsToDepth(index, depth, fold);
    } else if (op === "set" && Array.isArray(arg)) {
      expanded = normalizeExpanded(
        index,
        arg.filter((id): id is string => typeof id === "string"),
      );
    } else if (typeof arg === "string" && index.groups.has(arg)) {
      if (op === "open") expanded = expandGroup(index, expanded, arg);
      else if (op === "close") expanded = collapseGroup(index, expanded, arg);
    }
  }
  return { depth, expanded };
}
