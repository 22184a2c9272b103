// VisibleGraph.repOf without a pass over the whole graph: the visible element of a payload node
// or group id, worked out when asked (and kept), iterated in the order an eager map would be
// (node ids in payload order, then group ids not also a node's).
import { representer } from "./expansion";
import type { Folded } from "./folding";
import type { GraphIndex } from "./graph_index";

export class RepMap implements ReadonlyMap<string, string> {
  private readonly known = new Map<string, string>();
  /** The outermost closed group's call around `id` (or `id`), before folding. */
  readonly closed: (id: string) => string;

  constructor(
    private readonly index: GraphIndex,
    expanded: ReadonlySet<string>,
    private readonly folded: Folded | null | undefined,
  ) {
    this.closed = representer(index, expanded);
  }

  get(id: string): string | undefined {
    let rep = this.known.get(id);
    if (rep === undefined && this.has(id)) {
      // A closed member of a folded run is drawn as the run's slice (members have one call).
      const closed = this.closed(id);
      rep = this.folded?.sliceOf(closed)?.id ?? closed;
      this.known.set(id, rep);
    }
    return rep;
  }

  has(id: string): boolean {
    return this.index.nodes.has(id) || this.index.groups.has(id);
  }

  get size(): number {
    let size = this.index.nodes.size;
    for (const id of this.index.groups.keys()) if (!this.index.nodes.has(id)) size += 1;
    return size;
  }

  *keys(): MapIterator<string> {
    yield* this.index.nodes.keys();
    for (const id of this.index.groups.keys()) if (!this.index.nodes.has(id)) yield id;
  }

  *values(): MapIterator<string> {
    for (const id of this.keys()) yield this.get(id) as string;
  }

  *entries(): MapIterator<[string, string]> {
    for (const id of this.keys()) yield [id, this.get(id) as string];
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void): void {
    for (const [id, rep] of this.entries()) fn(rep, id, this);
  }
}
