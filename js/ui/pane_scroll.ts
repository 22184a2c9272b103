// Scrolling inside one of the explorer's own scroll boxes (the side panel, the run explorer's
// summary table) without moving the notebook around it: Element.scrollIntoView scrolls every
// scrolling ancestor too, JupyterLab's notebook included, so the page jumps under the pointer.

/** Scroll `box` (and nothing else) so that `el` shows whole below the first `top` pixels of
 * the box (a sticky header). */
export function revealInBox(box: HTMLElement, el: HTMLElement, top = 0): void {
  const p = box.getBoundingClientRect();
  const r = el.getBoundingClientRect();
  if (r.top < p.top + top) box.scrollTop -= p.top + top - r.top;
  else if (r.bottom > p.bottom) box.scrollTop += r.bottom - p.bottom;
}

/** Scroll the side pane holding `el` so that `el` shows below the pane's sticky header. */
export function revealInPane(el: HTMLElement): void {
  const pane = el.closest<HTMLElement>(".pvw-pane");
  if (!pane) return;
  revealInBox(pane, el, pane.querySelector<HTMLElement>(":scope > .pvw-pane-header")?.offsetHeight ?? 0);
}
