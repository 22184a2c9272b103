// The visible-node budget inside the explorer: requests that would draw too many nodes are cut
// down to what fits (and the status line says so), "Expand all" opens one level per redraw,
// and a layout failure lowers the budget. The rules themselves are in view/budget.ts.
import { createCounter, type Counter, fitBudget, LAYOUT_BUDGET, lowerBudget, planExpandAll } from "./view/budget";
import * as text from "./view/budget_text";
import { expandGroup, groupsToDepth } from "./view/expansion";
import type { FoldState } from "./view/folding";
import type { GraphIndex } from "./view/graph_index";
import type { Message, StatusLine } from "./ui/status";

export interface ScaleDeps {
  index(): GraphIndex;
  expanded(): string[];
  /** `depth`: also the synced depth, when `ids` are exactly the groups down to it. */
  setExpanded(ids: string[], depth?: number): void;
  /** Resolves once the redraw that the latest change scheduled has finished (or failed). */
  nextDraw(): Promise<void>;
  /** Show `message` once the next redraw is drawn. */
  note(message: Message): void;
  status: StatusLine;
  /** Repeated blocks folded (view/folding.ts); absent: none. */
  fold?: () => FoldState;
}

export interface Scale {
  readonly budget: number;
  count(open: Iterable<string>): number;
  /** A new payload. */
  reset(): void;
  /** Stop a running "Expand all" (the user did something else). */
  cancel(): void;
  /** Open group `id` (and what encloses it), or as much of that as fits. */
  openGroup(id: string): void;
  /** `requested` cut down to the budget (keeping what is drawn now first), or null if it fits. */
  clamp(requested: string[], drawn: Iterable<string>): string[] | null;
  expandAll(): Promise<void>;
  /** Graphviz failed on `nodes` visible nodes: later layouts stay further below that. */
  failed(nodes: number): void;
}

export function createScale(deps: ScaleDeps): Scale {
  let budget = LAYOUT_BUDGET;
  let counter: Counter = createCounter(deps.index(), deps.fold);
  const folding = (): boolean => deps.fold?.().on ?? false;
  let run = 0;
  const same = (a: string[], b: string[]): boolean => a.join(",") === b.join(",");

  return {
    get budget() {
      return budget;
    },
    count: (open) => counter.count(new Set(open)),
    reset() {
      counter = createCounter(deps.index(), deps.fold);
      run += 1;
    },
    cancel() {
      run += 1;
    },
    openGroup(id) {
      run += 1;
      const index = deps.index();
      const now = deps.expanded();
      const requested = expandGroup(index, now, id);
      const requestedCount = counter.count(new Set(requested));
      if (requestedCount <= budget) {
        deps.setExpanded(requested);
        return;
      }
      const fitted = fitBudget(index, counter, requested, budget, now, [...[...index.ancestors(id)].reverse(), id]);
      const message = text.openGroupCut(index, id, fitted, requestedCount, budget);
      if (same(fitted.expanded, now)) deps.status.show({ text: message, kind: "warn" });
      else {
        deps.note({ text: message, kind: "warn" });
        deps.setExpanded(fitted.expanded);
      }
    },
    clamp(requested, drawn) {
      const requestedCount = counter.count(new Set(requested));
      if (requestedCount <= budget) return null;
      const fitted = fitBudget(deps.index(), counter, requested, budget, drawn);
      deps.note({ text: text.requestCut(fitted, requestedCount, budget), kind: "warn" });
      return fitted.expanded;
    },
    async expandAll() {
      const mine = ++run;
      const plan = planExpandAll(deps.index(), counter, deps.expanded(), budget, folding());
      for (const step of plan.steps) {
        const progress: Message = { text: text.expandAllProgress(step, plan), kind: "busy" };
        deps.status.show(progress);
        deps.note(progress);
        const level = groupsToDepth(deps.index(), step.depth, folding());
        deps.setExpanded(step.expanded, same(level, step.expanded) ? step.depth : undefined);
        await deps.nextDraw();
        // Stop if anything else changed the groups meanwhile, or the layout failed.
        if (mine !== run || !same(deps.expanded(), step.expanded)) return;
        if (deps.status.message?.kind === "error") return;
      }
      if (mine !== run) return;
      deps.status.show({ text: text.expandAllDone(plan, budget), kind: plan.stop ? "warn" : "info" });
    },
    failed(nodes) {
      budget = lowerBudget(budget, nodes);
    },
  };
}
