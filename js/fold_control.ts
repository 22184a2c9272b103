// Folded repeated blocks inside the explorer: GraphWidget's `fold` trait, which closed members
// the user unfolded (a click on a folded run, the inspector's links, a selection, search), and
// the depth presets that fold everything again. The rules are in view/folding.ts.
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "./model_contract";
import { groupsToDepth } from "./view/expansion";
import { foldRuns, membersToUnfold, parseRunId, type Folded, type FoldState } from "./view/folding";
import type { GraphIndex } from "./view/graph_index";
import type { SearchState } from "./view/highlights";
import type { VisibleGraph } from "./view/visible";

export interface FoldDeps {
  index(): GraphIndex;
  vg(): VisibleGraph;
  /** Redraw (coalesced). */
  schedule(): void;
  /** Run `fn` once the redraw scheduled last is drawn. */
  afterDraw(fn: () => void): void;
  centre(id: string): void;
  /** The explorer's search state (view/highlights.ts). */
  search(): SearchState;
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
  /** `id` was selected from outside (the kernel's `selected`, the run explorer's heatmap row):
   * a block hidden in a folded run is shown on its own; a run id stays as it is (the
   * inspector's "fold" keeps it selected). */
  selected(id: string): void;
  /** Centre the search's current match; if it is a block of a folded run, unfold it first
   * (and fold back the one unfolded for the previous match). */
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
    selected(id) {
      if (state.on && id && !parseRunId(deps.index(), id)) unfold(membersToUnfold(deps.index(), id));
    },
    focusMatch() {
      const search = deps.search();
      const stop = search.matches[search.current];
      // A block holding the current match is shown on its own (folded back once the match
      // moves on); the stops stay the same, so the current one is still current after it.
      const shown = stop?.member ?? null;
      if (shown === searchShown) {
        if (stop) deps.centre(stop.element);
        return;
      }
      searchShown = shown;
      onFold();
      deps.afterDraw(() => {
        deps.decorate(); // the stops' elements in the new view
        const s = deps.search();
        const now = s.matches[s.current];
        if (now) deps.centre(now.element);
      });
    },
    destroy() {
      model.off("change:fold", onFold);
    },
  };
}
