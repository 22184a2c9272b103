// The loss curve under the heatmap, on the same step axis: each pixel column drawn as the
// range (min..max) of its steps' losses, so a spike among thousands of steps still shows; each
// step whose loss is NaN/Inf gets a red tick at the bottom (`data-nonfinite`: how many in view).
import { h } from "./dom";
import { nonfiniteLoss, type RunData } from "../view/run_data";
import { binRange, columnOf, envelope } from "../view/run_pool";
import { formatNorm } from "../view/grad_stats";
import { LABEL_W } from "./run_heatmap";

export interface LossHost {
  data(): RunData | null;
  window(): { from: number; to: number };
  picked(): number;
  pick(stepIndex: number): void;
}

export function createLossCurve(host: LossHost): { el: HTMLElement; draw(): void } {
  const canvas = h("canvas", { className: "pvw-run-canvas", testid: "pvw-run-loss" });
  const el = h("div", { className: "pvw-run-loss" }, [canvas]);
  const ctx = canvas.getContext("2d");
  let cellW = 1;

  function draw(): void {
    const d = host.data();
    if (!ctx || !d) return;
    const width = Math.max(LABEL_W + 20, el.clientWidth);
    const height = Math.max(30, el.clientHeight);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const style = getComputedStyle(el);
    const muted = style.getPropertyValue("--pvw-muted").trim() || "#57606a";
    const accent = style.getPropertyValue("--pvw-accent").trim() || "#1976d2";
    const fg = style.getPropertyValue("--pvw-fg").trim() || "#1f2328";
    ctx.font = `10px ${style.fontFamily}`;
    cellW = width - LABEL_W;
    const w = host.window();
    const cols = Math.max(1, Math.floor(cellW));
    const { min, max } = envelope(d.loss, w.from, w.to, cols);
    let lo = Infinity;
    let hi = -Infinity;
    for (let c = 0; c < cols; c++) {
      if (Number.isFinite(min[c])) lo = Math.min(lo, min[c]);
      if (Number.isFinite(max[c])) hi = Math.max(hi, max[c]);
    }
    ctx.fillStyle = muted;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    // The ticks of non-finite losses and the picked step: also over a window of NaN losses
    // only, which said "loss: not recorded" and marked nothing.
    const marks = (): number => {
      if (!ctx) return 0;
      // Every step whose loss was NaN/Inf, each column of them a red tick at the bottom (the
      // anomalies name only a stretch's first step: the rest went unmarked).
      ctx.fillStyle = "#d62728";
      const nonfinite = nonfiniteLoss(d);
      let ticks = 0;
      for (let c = 0; c < cols; c++) {
        const [a, b] = binRange(w.from, w.to, cols, c);
        for (let i = a; i < b; i++) {
          if (nonfinite[i]) {
            ctx.fillRect(LABEL_W + c, height - 6, 1, 6);
            ticks++;
            break;
          }
        }
      }
      let steps = 0; // the window's non-finite steps, for tests and tools
      for (let i = w.from; i < w.to; i++) steps += nonfinite[i];
      canvas.dataset.nonfinite = String(steps);
      const picked = host.picked();
      if (picked >= w.from && picked < w.to) {
        ctx.strokeStyle = accent;
        ctx.lineWidth = 2;
        const x = LABEL_W + columnOf(w.from, w.to, cellW, picked) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, 0);
        ctx.lineTo(x, height);
        ctx.stroke();
      }
      return ticks;
    };
    if (lo > hi) {
      const ticks = marks();
      ctx.fillStyle = ticks ? "#d62728" : muted;
      ctx.fillText(ticks ? "loss: NaN/Inf" : "loss: not recorded", LABEL_W - 4, height / 2);
      canvas.dataset.points = "0";
      return;
    }
    const pad = 4;
    const y = (v: number): number => (hi > lo ? pad + ((hi - v) * (height - 2 * pad - 4)) / (hi - lo) : height / 2);
    ctx.fillText(`loss ${formatNorm(hi)}`, LABEL_W - 4, pad + 4);
    ctx.fillText(formatNorm(lo), LABEL_W - 4, height - pad - 6);
    ctx.strokeStyle = fg;
    ctx.lineWidth = 1;
    ctx.beginPath();
    let points = 0;
    let open = false;
    for (let c = 0; c < cols; c++) {
      if (!Number.isFinite(min[c])) {
        open = false;
        continue;
      }
      const x = LABEL_W + c + 0.5;
      if (!open) ctx.moveTo(x, y(max[c]));
      ctx.lineTo(x, y(max[c]));
      ctx.lineTo(x, y(min[c]));
      open = true;
      points++;
    }
    ctx.stroke();
    marks();
    canvas.dataset.points = String(points);
  }

  canvas.addEventListener("click", (event) => {
    const d = host.data();
    if (!d || d.S === 0) return;
    const px = event.clientX - canvas.getBoundingClientRect().left - LABEL_W;
    if (px < 0) return;
    const w = host.window();
    host.pick(Math.min(d.S - 1, Math.floor(w.from + ((w.to - w.from) * px) / cellW)));
  });
  return { el, draw };
}
