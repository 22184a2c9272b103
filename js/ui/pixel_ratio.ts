// Redraws a canvas chart when the page's devicePixelRatio changes: the window moved to a
// screen of another density, or the browser zoomed. A canvas is sized in device pixels when
// drawn (width * devicePixelRatio); a change of ratio alone resizes no element, so no
// ResizeObserver fired and the heatmap and the loss curve stayed at the old backing size,
// stretched blurry (or drawn at twice the pixels needed). A `resolution` media query matches
// only the ratio it was made for: its change event says the ratio left it, and a new query
// is made for the new one.

/** Calls `changed` on every devicePixelRatio change until the returned stop is called. */
export function onPixelRatioChange(changed: () => void): () => void {
  let query: MediaQueryList | null = null;
  const listen = (): void => {
    query = window.matchMedia?.(`(resolution: ${window.devicePixelRatio || 1}dppx)`) ?? null;
    query?.addEventListener("change", fire, { once: true });
  };
  const fire = (): void => {
    listen(); // the next change, from the new ratio
    changed();
  };
  listen();
  return () => {
    query?.removeEventListener("change", fire);
    query = null;
  };
}

/** `draw` again when `el` is resized or the devicePixelRatio changes; returns the stop. */
export function redrawOnResize(el: Element, draw: () => void): () => void {
  const resizer = new ResizeObserver(() => draw());
  resizer.observe(el);
  const stopRatio = onPixelRatioChange(draw);
  return () => {
    resizer.disconnect();
    stopRatio();
  };
}
