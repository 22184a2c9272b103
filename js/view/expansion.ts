// Which layer groups are open: depth presets, the default depth, and which visible element
// stands for each node. Pure; the same rules are implemented in paddleviz_widget/widget.py
// (the kernel computes the initial state) and both are tested against the shared fixtures.
import { instanceId, type GraphIndex } from "./graph_index";

/** Visible-node budget of the default view: deeper levels open only while it holds. */
export const DEFAULT_NODE_BUDGET = 150;

/** Group ids whose level is below `depth` (depth 0: everything collapsed), payload order. */
export function groupsToDepth(index: GraphIndex, depth: number): string[] {
  return [...index.groups.keys()].filter((id) => (index.level.get(id) ?? 0) < depth);
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

/** Deepest depth whose picture has at most `budget` visible nodes (0 if even that is more). */
export function autoDepth(index: GraphIndex, budget: number = DEFAULT_NODE_BUDGET): number {
  let best = 0;
  for (let depth = 1; depth <= index.maxLevel + 1; depth++) {
    if (visibleNodeCount(index, new Set(groupsToDepth(index, depth))) > budget) break;
    best = depth;
  }
  return best;
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
