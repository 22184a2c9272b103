// What a key pressed on the run explorer (its root focused: Tab reaches it before its buttons)
// does: ← → the previous / next recorded step, ↑ ↓ the layer row above / below (a keyboard
// user's only way to a layer: the heatmap's rows and the table's rows take clicks), Escape
// clears the selected layer. Pure; js/ui/run_explorer.ts applies it.

export type RunKeyAction =
  | { kind: "step"; delta: -1 | 1 }
  | { kind: "layer"; row: number }
  | { kind: "clear-layer" }
  | null;

/** The action of `key` with heatmap row `row` selected (-1: none) among `L` rows; null: not
 * ours (the key goes on to the page: Lab's own shortcuts keep working). */
export function runKey(key: string, row: number, L: number): RunKeyAction {
  if (key === "ArrowLeft") return { kind: "step", delta: -1 };
  if (key === "ArrowRight") return { kind: "step", delta: 1 };
  if ((key === "ArrowUp" || key === "ArrowDown") && L > 0) {
    const down = key === "ArrowDown";
    // No row yet: ↓ starts at the top, ↑ at the bottom; the ends stay where they are.
    const next = row < 0 || row >= L ? (down ? 0 : L - 1) : Math.max(0, Math.min(L - 1, row + (down ? 1 : -1)));
    return { kind: "layer", row: next };
  }
  if (key === "Escape" && row >= 0) return { kind: "clear-layer" };
  return null;
}
