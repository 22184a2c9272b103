// Scrolling inside the side panel (js/ui/panel_tabs.ts) without moving the notebook around it.

/** Scroll the side pane holding `el` (not the notebook around it) so that `el` shows below
 * the pane's sticky header. */
export function revealInPane(el: HTMLElement): void {
  const pane = el.closest<HTMLElement>(".pvw-pane");
  if (!pane) return;
  const p = pane.getBoundingClientRect();
  const r = el.getBoundingClientRect();
  const top = p.top + (pane.querySelector<HTMLElement>(":scope > .pvw-pane-header")?.offsetHeight ?? 0);
  if (r.top < top) pane.scrollTop -= top - r.top;
  else if (r.bottom > p.bottom) pane.scrollTop += r.bottom - p.bottom;
}
