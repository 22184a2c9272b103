// Folded repeated blocks inside the explorer: GraphWidget's `fold` trait, which closed members
// the user unfolded (a click on a folded run, the inspector's links, a selection, search), and
// the depth presets that fold everything again. The rules are in view/folding.ts.
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "./model_contract";
import { groupsToDepth } from "./view/expansion";
import { foldRuns, membersToUnfold, parseRunId, type Folded, type FoldState } from "./view/folding";
import type { GraphIndex } from "./view/graph_index";
import { repeatsOf } from "./view/repeats";
import { searchGraph } from "./view/search";
import type { VisibleGraph } from "./view/visible";

export interface FoldDeps {
  index(): GraphIndex;
  vg(): VisibleGraph;
  /** Redraw (coalesced). */
  schedule(): void;
  /** Run `fn` once the redraw scheduled last is drawn. */
  afterDraw(fn: () => void): void;
  centre(id: string): void;
  /** The explorer's search state (its current match is a visible element id). */
  search(): { query: string; matches: string[]; current: number };
  decorate(): void;
}

export interface FoldControl {
  /** Folding on (GraphWidget.fold, default true). */
  on(): boolean;
  state(): FoldState;
  /** The folded runs of a redraw that opens `open`. */
  folded(open: readonly string[]): Folded | null;
  /** The groups a depth preset opens (members stay closed), everything folded again. */
  preset(depth: number): string[];
  /** A new graph: everything folded. */
  reset(): void;
  /** A click on drawn node `id`: unfolds it if it is a folded run (whether it was one). */
  click(id: string): boolean;
  /** An inspector link on a run: unfold the part `id`, or fold the whole run again. */
  act(action: "unfold" | "fold", id: string): void;
  /** Unfold what hides payload id `id` (a member, or a run id) before it is selected. */
  reveal(id: string): void;
  /** Centre the search's current match; if it is a folded run, unfold the block holding the
   * first hit in it first (and fold back the one unfolded for the previous match). */
  focusMatch(): void;
  destroy(): void;
}

export function createFoldControl(model: AnyModel<WidgetModel>, deps: FoldDeps): FoldControl {
  let unfolded = new Set<string>();
  let searchShown: string | null = null; // a member unfolded for the search's current match
  let state: FoldState = { on: true, unfolded };
  const refresh = (): void => {
    const all = searchShown ? new Set([...unfolded, searchShown]) : unfolded;
    state = { on: model.get("fold") !== false, unfolded: all };
  };
  const onFold = (): void => {
    refresh();
    deps.schedule();
  };
  model.on("change:fold", onFold);
  refresh();

  const unfold = (members: readonly string[]): void => {
    const before = unfolded.size;
    unfolded = new Set([...unfolded, ...members]);
    if (unfolded.size !== before) onFold();
  };

  return {
    on: () => state.on,
    state: () => state,
    folded: (open) => foldRuns(deps.index(), new Set(open), state),
    preset(depth) {
      const changed = unfolded.size > 0 || searchShown !== null;
      unfolded = new Set();
      searchShown = null;
      refresh();
      if (changed) deps.schedule(); // also when the preset opens the groups open now
      return groupsToDepth(deps.index(), depth, state.on);
    },
    reset() {
      unfolded = new Set();
      searchShown = null;
      refresh();
    },
    click(id) {
      const run = deps.vg().nodeById.get(id)?.run;
      if (run) unfold(run.members);
      return Boolean(run);
    },
    act(action, id) {
      const slice = parseRunId(deps.index(), id);
      if (!slice) return;
      if (action === "unfold") unfold(slice.members);
      else {
        unfolded = new Set([...unfolded].filter((m) => !slice.run.members.includes(m)));
        if (searchShown && slice.run.members.includes(searchShown)) searchShown = null;
        onFold();
      }
    },
    reveal(id) {
      if (state.on) unfold(membersToUnfold(deps.index(), id));
    },
    focusMatch() {
      const search = deps.search();
      const current = search.matches[search.current];
      const run = current ? deps.vg().nodeById.get(current)?.run : undefined;
      let target: string | null = null;
      let shown: string | null = null;
      if (run) {
        // The first hit inside the folded run, and the member holding it.
        const index = deps.index();
        const repeats = repeatsOf(index);
        const hit = searchGraph(index, search.query).find((h) => deps.vg().elementsOf(h.id).includes(current));
        const chain = hit ? [hit.id, ...index.ancestors(hit.id)] : [];
        shown = chain.find((g) => repeats.runOf(g) === run.run) ?? null;
        target = shown ? (hit?.id ?? null) : null;
      }
      if (shown === searchShown) {
        if (current) deps.centre(current);
        return;
      }
      searchShown = shown;
      onFold();
      deps.afterDraw(() => {
        const s = deps.search();
        const vg = deps.vg();
        const el = target ? (vg.repOf.get(target) ?? target) : current;
        if (target) s.current = Math.max(0, s.matches.indexOf(el));
        deps.decorate();
        if (el) deps.centre(el);
      });
    },
    destroy() {
      model.off("change:fold", onFold);
    },
  };
}
