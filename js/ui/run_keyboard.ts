// The run explorer's root takes its keys (js/view/run_keys.ts says which and what they do).
import { runKey, type RunKeyAction } from "../view/run_keys";

const SUPPRESS = "data-lm-suppress-shortcuts";

/** Calls `act` for a key of ours pressed on `root` itself (not in its inputs and buttons);
 * `where` gives the selected row (-1: none) and the number of rows. Returns the undoing. */
export function onRunKeys(
  root: HTMLElement,
  where: () => [row: number, rows: number],
  act: (action: NonNullable<RunKeyAction>) => void,
): () => void {
  const ours = (event: KeyboardEvent): RunKeyAction =>
    event.target !== root || event.ctrlKey || event.metaKey || event.altKey ? null : runKey(event.key, ...where());
  // Notebook 7 matches its shortcuts on the document in the capture phase, before the root
  // sees the key (its ↑ ↓ moved to another cell, ← → did nothing), and skips an element marked
  // SUPPRESS: the window's capture phase comes first and marks the root for this key only.
  const claim = (event: KeyboardEvent): void => {
    if (!ours(event)) return;
    root.setAttribute(SUPPRESS, "true");
    setTimeout(() => root.removeAttribute(SUPPRESS), 0);
  };
  const onKey = (event: KeyboardEvent): void => {
    const action = ours(event);
    if (!action) return;
    act(action);
    event.preventDefault();
    event.stopPropagation(); // JupyterLab matches in the bubble phase: not its ↑ ↓ too
  };
  window.addEventListener("keydown", claim, true);
  root.addEventListener("keydown", onKey);
  return () => {
    window.removeEventListener("keydown", claim, true);
    root.removeEventListener("keydown", onKey);
  };
}
