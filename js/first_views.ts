// Which drawing is a graph's first view (it opens readable on the graph's output:
// view/opening.ts; later drawings keep the user's zoom), kept apart from the explorer so that
// the rule holds whatever order the kernel's messages and the drawings come in:
// - each graph read gets one first view, and a drawing of an older graph ending after the
//   next graph was read never uses it up;
// - the first view is the first drawing of the graph that reaches the screen: one superseded
//   on its way (a newer view of the same graph asked for meanwhile) leaves it to the next;
// - a blank graph (`{}`: the placeholder GraphWidget(y) opens its comm with, before the
//   graph is built) before anything is drawn is no graph: nothing is drawn of it, and the
//   graph that follows gets the first view. A blank graph set after a drawing is drawn (empty).

export interface FirstViews<P extends object> {
  /** A graph was read (`blank`: see above); whether to draw it (false: wait for the next). */
  read(blank: boolean): boolean;
  /** A drawing of the graph read last starts: whether it opens as the graph's first view. */
  started(plan: P): boolean;
  /** The drawing `plan` is on screen. */
  drawn(plan: P): void;
}

export function createFirstViews<P extends object>(): FirstViews<P> {
  let graphs = 0; // graphs read (and drawn), the last one is the current one
  let seen = 0; // the newest graph with a drawing on screen (0: nothing drawn yet)
  const graphOf = new WeakMap<P, number>();
  return {
    read(blank) {
      if (blank && seen === 0) return false;
      graphs += 1;
      return true;
    },
    started(plan) {
      graphOf.set(plan, graphs);
      return seen !== graphs;
    },
    drawn(plan) {
      seen = Math.max(seen, graphOf.get(plan) ?? 0);
    },
  };
}
