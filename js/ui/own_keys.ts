// The keys the widget's own controls take, kept from Jupyter's notebook shortcuts. JupyterLab
// and Notebook 7 match their command-mode shortcuts on every key pressed in a cell's output
// unless the focus is in a text box: ↑ ↓ on the Step slider or the Depth list moved to another
// cell (the slider and the list never changed, and the focus left the widget), and Notebook 7,
// which matches in the capture phase before the widget sees the key, ran the cell on
// Shift+Enter in the search box (meant: the previous match) and moved cells on ↑ ↓ in the
// panel's tab strip. Lumino skips an element
// marked SUPPRESS: the window's capture phase, first of all, marks the focused control for a
// key it takes, for this key only. Keys with Ctrl, Cmd or Alt, Tab, and every key pressed
// outside the widget stay Jupyter's.

const SUPPRESS = "data-lm-suppress-shortcuts";

/** What a focused element of ours is, as far as keys go (null: it takes no key). */
export type Control = "text" | "range" | "select" | "tab" | null;

interface Pressed {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
}

const MOVES = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"]);

/** Whether `control` does something with `event`'s key (so Jupyter must not). */
export function takesKey(control: Control, event: Pressed): boolean {
  const { key } = event;
  if (control === null || event.ctrlKey || event.metaKey || event.altKey || key === "Tab") return false;
  switch (control) {
    case "text": // typing, Enter / Shift+Enter (the next / previous match), Escape (clears)
      return true;
    case "range":
      return MOVES.has(key);
    case "select": // a letter picks the entry it starts
      return MOVES.has(key) || key === "Enter" || key === " " || key.length === 1;
    case "tab":
      return MOVES.has(key);
  }
}

/** The kind of control `el` is. */
export function controlOf(el: Element): Control {
  // Buttons and check boxes are left out: Enter on a toolbar button stayed the widget's in both
  // front ends (Space Jupyter does not bind).
  if (el instanceof HTMLInputElement) {
    if (el.type === "range") return "range";
    return ["checkbox", "radio", "button", "submit", "reset"].includes(el.type) ? null : "text";
  }
  if (el instanceof HTMLTextAreaElement) return "text";
  if (el instanceof HTMLSelectElement) return "select";
  return el.getAttribute("role") === "tab" ? "tab" : null;
}

/** Keeps the keys the controls inside `el` take from Jupyter's shortcuts; returns the undoing. */
export function keepOwnKeys(el: HTMLElement): () => void {
  const claim = (event: KeyboardEvent): void => {
    const target = event.target;
    if (!(target instanceof Element) || !el.contains(target) || !takesKey(controlOf(target), event)) return;
    target.setAttribute(SUPPRESS, "true");
    setTimeout(() => target.removeAttribute(SUPPRESS), 0);
  };
  window.addEventListener("keydown", claim, true);
  return () => window.removeEventListener("keydown", claim, true);
}
