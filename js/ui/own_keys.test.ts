import { describe, expect, it } from "vitest";
import { type Control, takesKey } from "./own_keys";

const key = (k: string, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean }> = {}) => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe("takesKey: which keys a focused control keeps from Jupyter", () => {
  it("keeps what each control does with the key", () => {
    // Notebook 7 ran the cell on Shift+Enter in the search box, and moved cells on ↑ ↓ on the
    // Step slider, the Depth list and the tab strip.
    const kept: [Control, string][] = [
      ["text", "Enter"],
      ["text", "Escape"],
      ["text", "a"],
      ["range", "ArrowDown"],
      ["range", "PageUp"],
      ["select", "ArrowUp"],
      ["select", "b"],
      ["tab", "End"],
    ];
    for (const [control, k] of kept) expect(takesKey(control, key(k)), `${control} ${k}`).toBe(true);
  });

  it("leaves Jupyter every other key: modifiers, Tab, keys a control has no use for", () => {
    const left: [Control, ReturnType<typeof key>][] = [
      ["text", key("s", { ctrlKey: true })], // save the notebook
      ["text", key("Enter", { metaKey: true })],
      ["select", key("ArrowDown", { altKey: true })],
      ["text", key("Tab")],
      ["range", key("a")],
      ["range", key("Escape")],
      ["tab", key("a")],
      ["tab", key("Enter")], // a tab is a button: Jupyter does not take it
      [null, key("Enter")],
    ];
    for (const [control, k] of left) expect(takesKey(control, k), `${control} ${k.key}`).toBe(false);
  });
});
