// The run explorer's root takes its keys (js/view/run_keys.ts says which and what they do).
import { runKey, type RunKeyAction } from "../view/run_keys";

/** Calls `act` for a key of ours pressed on `root` itself (not in its inputs and buttons);
 * `where` gives the selected row (-1: none) and the number of rows. */
export function onRunKeys(
  root: HTMLElement,
  where: () => [row: number, rows: number],
  act: (action: NonNullable<RunKeyAction>) => void,
): void {
  root.addEventListener("keydown", (event) => {
    if (event.target !== root || event.ctrlKey || event.metaKey || event.altKey) return;
    const action = runKey(event.key, ...where());
    if (!action) return;
    act(action);
    event.preventDefault();
    event.stopPropagation(); // not also the notebook's (its ↑ ↓ move to another cell)
  });
}
