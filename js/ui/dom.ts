// Tiny DOM helpers shared by the UI pieces. Text and titles pass through visibleText: names
// from user code show bidi overrides and controls as escapes (js/view/visible_text.ts).
import { visibleText } from "../view/visible_text";

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; testid?: string; text?: string; title?: string } = {},
  children: Array<Node | string> = [],
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.className) el.className = props.className;
  if (props.testid) el.dataset.testid = props.testid;
  if (props.text !== undefined) el.textContent = visibleText(props.text);
  if (props.title) {
    el.title = visibleText(props.title);
    el.setAttribute("aria-label", el.title);
  }
  el.append(...children);
  return el;
}

export function button(label: string, title: string, onClick: () => void, testid?: string): HTMLButtonElement {
  const b = h("button", { className: "pvw-button", text: label, title, testid });
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}
