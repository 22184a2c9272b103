// The layer x step heatmap of gradient norms on a canvas: columns max-pooled to the pixel
// width (view/run_pool.ts), log colour (view/run_colour.ts), anomalies and full captures
// marked on top, the picked step and the selected layer outlined. Drag or shift+wheel pans,
// ctrl+wheel zooms, the wheel scrolls rows when they do not all fit; a click picks a step and
// a layer.
import { h } from "./dom";
import { isProblem, nearestIndex, type RunData } from "../view/run_data";
import { NAMED_ROW, roundSteps, rowLayout } from "../view/run_window";
import { argmaxInBin, columnOf, poolRow } from "../view/run_pool";
import type { LogColour } from "../view/run_colour";
import { formatLogged } from "../view/grad_stats";

export const LABEL_W = 150; // CSS px of layer names left of the cells
const MARK_H = 12; // strip above the cells: anomalies (red) and full captures (dark)
const AXIS_H = 22; // the picked step's mark and step numbers below

export interface HeatmapHost {
  data(): RunData | null;
  colour(): LogColour;
  window(): { from: number; to: number; top: number };
  setWindow(change: { from?: number; to?: number; top?: number }): void;
  zoom(factor: number, at: number): void;
  pan(deltaSteps: number): void;
  picked(): number; // step index, -1 none
  layer(): number; // row, -1 none
  pick(stepIndex: number, row: number | null): void;
}

export interface Heatmap {
  el: HTMLElement;
  draw(): void;
  /** Rows that fit (for scrolling a row into view). */
  visibleRows(): number;
  destroy(): void;
}

export function createHeatmap(host: HeatmapHost): Heatmap {
  const canvas = h("canvas", { className: "pvw-run-canvas", testid: "pvw-run-heatmap" });
  const tip = h("div", { className: "pvw-tooltip pvw-run-tip", testid: "pvw-run-tip" });
  tip.hidden = true;
  const el = h("div", { className: "pvw-run-heat" }, [canvas, tip]);
  const ctx = canvas.getContext("2d");
  const cells = document.createElement("canvas"); // one pixel per (column, row), scaled up
  let geometry = { width: 0, height: 0, rowH: NAMED_ROW, rows: 0, cellW: 0 };
  // What `cells` holds: a redraw for a step pick or a selected layer (the marks only) reuses
  // it instead of pooling every row again (up to 5 million norms, ~50-150 ms a draw).
  let cellsOf: { d: RunData; scale: LogColour; key: string } | null = null;

  function layout(d: RunData): void {
    const width = Math.max(LABEL_W + 20, el.clientWidth);
    const height = Math.max(60, el.clientHeight);
    const avail = height - MARK_H - AXIS_H;
    geometry = { width, height, ...rowLayout(avail, d.L), cellW: width - LABEL_W };
  }

  function draw(): void {
    const d = host.data();
    if (!ctx || !d) return;
    layout(d);
    const dpr = window.devicePixelRatio || 1;
    const { width, height, rowH, rows, cellW } = geometry;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const style = getComputedStyle(el);
    const fg = style.getPropertyValue("--pvw-fg").trim() || "#1f2328";
    const muted = style.getPropertyValue("--pvw-muted").trim() || "#57606a";
    const accent = style.getPropertyValue("--pvw-accent").trim() || "#1976d2";
    ctx.clearRect(0, 0, width, height);
    const w = host.window();
    const top = Math.min(w.top, Math.max(0, d.L - rows));
    const shown = Math.min(rows, d.L - top);
    const cols = Math.max(1, Math.round(cellW * dpr)); // pool to device pixels
    // Cells: one pooled row per layer into an image, scaled up without smoothing.
    const scale = host.colour();
    const key = `${w.from},${w.to},${top},${shown},${cols}`;
    const same = cellsOf !== null && cellsOf.d === d && cellsOf.scale === scale && cellsOf.key === key;
    if (shown > 0 && d.S > 0 && same) {
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(cells, LABEL_W, MARK_H, cellW, shown * rowH);
    } else if (shown > 0 && d.S > 0) {
      cells.width = cols;
      cells.height = shown;
      const cctx = cells.getContext("2d");
      cellsOf = null;
      if (cctx) {
        const image = cctx.createImageData(cols, shown);
        const pooled = new Float32Array(cols);
        for (let r = 0; r < shown; r++) {
          poolRow(d.norms, d.bad, d.L, top + r, w.from, w.to, cols, pooled);
          for (let c = 0; c < cols; c++) {
            const [R, G, B] = scale.rgb(pooled[c]);
            const o = (r * cols + c) * 4;
            image.data[o] = R;
            image.data[o + 1] = G;
            image.data[o + 2] = B;
            image.data[o + 3] = 255;
          }
        }
        cctx.putImageData(image, 0, 0);
        cellsOf = { d, scale, key };
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(cells, LABEL_W, MARK_H, cellW, shown * rowH);
      }
    }
    const x = (i: number): number => LABEL_W + (columnOf(w.from, w.to, cellW, i) + 0.5);
    const inWindow = (i: number): boolean => i >= w.from && i < w.to;
    // Full captures (dark ticks), then problems (red ticks, and a ring on their cell); steps a
    // GradScaler skipped are information: their cells' tooltip says so, no red tick.
    ctx.fillStyle = muted;
    for (const step of d.desc.captured) {
      const i = indexOf(d, step);
      if (i >= 0 && inWindow(i)) ctx.fillRect(Math.floor(x(i)), MARK_H - 5, 1, 5);
    }
    ctx.strokeStyle = "#d62728";
    ctx.fillStyle = "#d62728";
    for (const a of d.desc.anomalies) {
      const i = indexOf(d, a.step);
      if (i < 0 || !inWindow(i) || !isProblem(a)) continue;
      const cx = x(i);
      ctx.beginPath();
      ctx.moveTo(cx - 4, 0);
      ctx.lineTo(cx + 4, 0);
      ctx.lineTo(cx, 6);
      ctx.fill();
      const row = d.layerIndex.get(a.layer);
      if (row !== undefined && row >= top && row < top + shown) {
        // Ringed when a step is wide enough to ring without covering its neighbours; else a
        // dot by the layer's name (the triangle above says which step).
        const cell = cellW / (w.to - w.from);
        ctx.lineWidth = 1.5;
        if (cell >= 8) ctx.strokeRect(cx - cell / 2 + 1, MARK_H + (row - top) * rowH + 1, cell - 2, rowH - 2);
        else ctx.fillRect(LABEL_W - 3, MARK_H + (row - top) * rowH + rowH / 2 - 1.5, 3, 3);
      }
    }
    // The picked step and the selected layer.
    const picked = host.picked();
    ctx.strokeStyle = accent;
    ctx.lineWidth = 2;
    if (picked >= 0 && inWindow(picked)) {
      // Above and below the cells, not over them: the picked step's own cells stay readable.
      const px = x(picked);
      const bottom = MARK_H + shown * rowH;
      ctx.beginPath();
      ctx.moveTo(px - 5, bottom + 7);
      ctx.lineTo(px + 5, bottom + 7);
      ctx.lineTo(px, bottom);
      ctx.fillStyle = accent;
      ctx.fill();
      ctx.fillRect(Math.floor(px) - 1, 0, 2, MARK_H - 6);
    }
    const layer = host.layer();
    if (layer >= top && layer < top + shown) {
      ctx.strokeRect(1, MARK_H + (layer - top) * rowH, width - 2, rowH);
    }
    // Layer names (the end of a long path kept) and step numbers.
    ctx.font = `${Math.min(11, Math.max(8, rowH - 1))}px ${style.fontFamily}`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (let r = 0; r < shown; r++) {
      ctx.fillStyle = top + r === layer ? accent : fg;
      ctx.fillText(clip(ctx, layerName(d.desc.layers[top + r]), LABEL_W - 8), LABEL_W - 4, MARK_H + (r + 0.5) * rowH);
    }
    ctx.fillStyle = muted;
    ctx.textBaseline = "top";
    ctx.font = `10px ${style.fontFamily}`;
    // Rows that do not all fit say so under the names (the wheel scrolls them), clear of
    // the first step's number.
    if (shown < d.L)
      ctx.fillText(`rows ${top + 1}\u2013${top + shown} of ${d.L}`, LABEL_W - 14, MARK_H + shown * rowH + 9);
    ctx.textAlign = "center";
    for (const step of roundSteps(d.steps[w.from], d.steps[w.to - 1], Math.max(2, Math.floor(cellW / 90)))) {
      const i = nearestIndex(d.steps, step);
      if (i >= w.from && i < w.to && d.steps[i] === step) ctx.fillText(String(step), x(i), MARK_H + shown * rowH + 9);
    }
    canvas.dataset.from = String(w.from);
    canvas.dataset.to = String(w.to);
    canvas.dataset.top = String(top);
    canvas.dataset.rows = String(shown);
    canvas.dataset.columns = String(cols);
  }

  /** The cell under a pointer: step index (the bin's largest) and row, or null. */
  function cellAt(event: MouseEvent): { i: number; row: number | null } | null {
    const d = host.data();
    if (!d || d.S === 0) return null;
    const box = canvas.getBoundingClientRect();
    const px = event.clientX - box.left - LABEL_W;
    const py = event.clientY - box.top - MARK_H;
    const { cellW, rowH, rows } = geometry;
    if (px < 0 || px >= cellW) return null;
    const w = host.window();
    const top = Math.min(w.top, Math.max(0, d.L - rows));
    const r = Math.floor(py / rowH);
    const row = py >= 0 && r < Math.min(rows, d.L - top) ? top + r : null;
    const dpr = window.devicePixelRatio || 1;
    const cols = Math.max(1, Math.round(cellW * dpr));
    const b = Math.min(cols - 1, Math.floor(px * dpr));
    const i =
      row === null
        ? Math.floor(w.from + ((w.to - w.from) * px) / cellW)
        : argmaxInBin(d.norms, d.bad, d.L, row, w.from, w.to, cols, b);
    return { i: Math.min(d.S - 1, Math.max(0, i)), row };
  }

  let drag: { x: number; moved: boolean } | null = null;
  canvas.addEventListener("mousedown", (event) => {
    drag = { x: event.clientX, moved: false };
  });
  const endDrag = (): void => {
    drag = null;
  };
  window.addEventListener("mouseup", endDrag); // removed by destroy(): it holds this heatmap
  canvas.addEventListener("mousemove", (event) => {
    const d = host.data();
    if (drag && d) {
      const dx = event.clientX - drag.x;
      if (Math.abs(dx) > 3 || drag.moved) {
        const w = host.window();
        const steps = Math.round((-dx * (w.to - w.from)) / Math.max(1, geometry.cellW));
        if (steps !== 0) {
          host.pan(steps);
          drag = { x: event.clientX, moved: true };
        } else drag.moved = true;
      }
      tip.hidden = true;
      return;
    }
    const cell = cellAt(event);
    if (!d || !cell || cell.row === null) {
      tip.hidden = true;
      return;
    }
    const v = d.norms[cell.i * d.L + cell.row];
    const marks = d.desc.anomalies.filter(
      (a) => a.step === d.steps[cell.i] && (a.layer === d.desc.layers[cell.row ?? -1] || a.layer === ""),
    );
    const flagged = d.bad[cell.i * d.L + cell.row] !== 0;
    const norm =
      v < 0
        ? "no gradient"
        : `gradient norm ${formatLogged(v)}${flagged ? " (finite elements; NaN/Inf elements too)" : ""}`;
    const lines = [layerName(d.desc.layers[cell.row]), `step ${d.steps[cell.i]}: ${norm}`];
    if (d.captured.has(d.steps[cell.i])) lines.push("full capture: click to see its graph");
    for (const a of marks) lines.push(a.message);
    tip.replaceChildren(
      ...lines.map((line, k) => h("div", { className: k === 0 ? "pvw-tooltip-title" : "", text: line })),
    );
    tip.hidden = false;
    const box = el.getBoundingClientRect();
    const left = event.clientX - box.left + 14;
    tip.style.left = `${Math.min(left, box.width - tip.offsetWidth - 4)}px`;
    const below = event.clientY - box.top + 14;
    // Above the pointer when it would leave the heatmap's box (which clips it) below.
    tip.style.top = `${below + tip.offsetHeight > box.height ? Math.max(0, event.clientY - box.top - tip.offsetHeight - 8) : below}px`;
  });
  canvas.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
  canvas.addEventListener("click", (event) => {
    if (drag?.moved) return;
    const cell = cellAt(event);
    if (cell) host.pick(cell.i, cell.row);
    else if (event.clientX - canvas.getBoundingClientRect().left < LABEL_W) {
      const row = rowAt(event); // a layer's name: select the layer, keep the step
      if (row !== null) host.pick(-1, row);
    }
  });

  function rowAt(event: MouseEvent): number | null {
    const d = host.data();
    if (!d) return null;
    const r = Math.floor((event.clientY - canvas.getBoundingClientRect().top - MARK_H) / geometry.rowH);
    const top = Math.min(host.window().top, Math.max(0, d.L - geometry.rows));
    return r >= 0 && r < Math.min(geometry.rows, d.L - top) ? top + r : null;
  }

  // Debug hook (browser tests, devtools): the page point at the middle of the pixel column
  // that shows step index `i`, in row `row` (null if neither is in view).
  Object.assign(canvas, {
    pvwCell(i: number, row: number): { x: number; y: number } | null {
      const d = host.data();
      const w = host.window();
      const top = Math.min(w.top, Math.max(0, (d?.L ?? 0) - geometry.rows));
      if (!d || i < w.from || i >= w.to || row < top || row >= top + geometry.rows) return null;
      const box = canvas.getBoundingClientRect();
      const x = box.left + LABEL_W + ((i - w.from + 0.5) * geometry.cellW) / (w.to - w.from);
      return { x, y: box.top + MARK_H + (row - top + 0.5) * geometry.rowH };
    },
  });
  canvas.addEventListener(
    "wheel",
    (event) => {
      const d = host.data();
      if (!d) return;
      const box = canvas.getBoundingClientRect();
      const at = Math.min(1, Math.max(0, (event.clientX - box.left - LABEL_W) / Math.max(1, geometry.cellW)));
      if (event.ctrlKey || event.metaKey) {
        event.preventDefault();
        host.zoom(event.deltaY > 0 ? 1.25 : 0.8, at);
      } else if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
        event.preventDefault();
        const w = host.window();
        const delta = event.deltaX || event.deltaY;
        host.pan(Math.sign(delta) * Math.max(1, Math.round((w.to - w.from) / 10)));
      } else if (d.L > geometry.rows) {
        event.preventDefault(); // rows scroll; the notebook scrolls when they all fit
        const w = host.window();
        host.setWindow({ top: Math.max(0, Math.min(d.L - geometry.rows, w.top + Math.sign(event.deltaY) * 3)) });
      }
    },
    { passive: false },
  );

  return {
    el,
    draw,
    visibleRows() {
      const d = host.data();
      if (d) layout(d); // before the first draw too
      return geometry.rows;
    },
    destroy() {
      window.removeEventListener("mouseup", endDrag);
    },
  };
}

/** A heatmap row's name: the layer path, "(model)" for the model's own parameters. */
export function layerName(layer: string): string {
  return layer === "" ? "(model)" : layer;
}

const positions = new WeakMap<Float64Array, Map<number, number>>();

/** Index of recorded step `step`, -1 if not recorded (memoised per steps array). */
export function indexOf(d: RunData, step: number): number {
  let map = positions.get(d.steps);
  if (!map) {
    map = new Map();
    d.steps.forEach((s, i) => {
      map?.set(s, i);
    });
    positions.set(d.steps, map);
  }
  return map.get(step) ?? -1;
}

/** What hangs on the character before it: marks, joiners, variation selectors, skin tones. */
const HANGING = /^(?:\p{M}|\u200d|\ufe0e|\ufe0f|[\u{1f3fb}-\u{1f3ff}])+/u;

/** `text` clipped from the left by whole characters: cut by UTF-16 units, half an emoji (a
 * replacement box), a lone accent or an emoji's joiner led the name. */
function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let t = text;
  while (t.length > 1 && ctx.measureText(`\u2026${t}`).width > width) {
    t = t.slice((t.codePointAt(0) ?? 0) > 0xffff ? 2 : 1).replace(HANGING, "");
  }
  return `\u2026${t}`;
}
