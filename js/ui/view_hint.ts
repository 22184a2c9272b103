// The corner hint over the drawing: says when the view shows only part of a graph too big to
// read whole, or all of it too small to read (js/view/opening.ts decides which). It takes no
// pointer events, so the drawing under it stays draggable and clickable.
import { h } from "./dom";
import { visibleText } from "../view/visible_text";

export interface ViewHint {
  el: HTMLElement;
  show(text: string | null): void;
}

export function createViewHint(): ViewHint {
  const el = h("div", { className: "pvw-view-hint", testid: "pvw-view-hint" });
  el.setAttribute("role", "note");
  el.hidden = true;
  return {
    el,
    show(text) {
      // Called on every zoom event: touch the DOM only when the text changes.
      if ((text ?? "") === el.textContent && el.hidden === (text === null)) return;
      el.textContent = visibleText(text ?? "");
      el.hidden = text === null;
    },
  };
}
