// Tiny DOM helpers shared by the UI pieces.

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; testid?: string; text?: string; title?: string } = {},
  children: Array<Node | string> = [],
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.className) el.className = props.className;
  if (props.testid) el.dataset.testid = props.testid;
  if (props.text !== undefined) el.textContent = props.text;
  if (props.title) {
    el.title = props.title;
    el.setAttribute("aria-label", props.title);
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
