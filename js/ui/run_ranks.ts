// The rank axis of a multi-rank run: the rank selector (toolbar), the rank x layer view of
// gradient norms at the picked step (a column per rank, a row per layer, the heatmap's
// colours) and the cross-rank report as a list (a click picks the finding's rank, step and
// layer; a missing gradient's "graph diff" shows the graph difference between a rank without
// it and one with it). Hidden for a single-rank run.
import type { AnyModel } from "@anywidget/types";
import type { RunModel } from "../run_model_contract";
import { h, button } from "./dom";
import type { LogColour } from "../view/run_colour";
import { formatLogged } from "../view/grad_stats";
import {
  cellAt,
  decodeRanks,
  findingTarget,
  kindLabel,
  rankGrid,
  rankSpan,
  type RankFinding,
  type RanksInfo,
} from "../view/run_ranks";

export interface RankPanel {
  /** The rank selector, for the toolbar. */
  select: HTMLSelectElement;
  /** The rank x layer view and the report. */
  el: HTMLElement;
  /** Read `_ranks`, `_rank_norms` and `rank` again and draw. */
  update(): void;
  /** Some rank of a multi-rank run is still being written. */
  running(): boolean;
}

export interface RankPanelOptions {
  model: AnyModel<RunModel>;
  layers: () => string[];
  scale: () => LogColour;
  commit: (changes: Partial<RunModel>) => void;
  showDiff: (index: number, finding: RankFinding) => void;
}

const MAX_HEIGHT = 150;

export function createRankPanel(o: RankPanelOptions): RankPanel {
  let info: RanksInfo | null = null;
  let grid: Float32Array | null = null;
  const select = h("select", {
    className: "pvw-select pvw-run-rank",
    testid: "pvw-run-rank",
    title: "The rank shown by the heatmap, loss curve and step detail",
  });
  select.addEventListener("change", () => o.commit({ rank: Number(select.value) }));
  const caption = h("div", { className: "pvw-run-ranks-caption", testid: "pvw-run-ranks-caption" });
  const canvas = h("canvas", { className: "pvw-run-canvas", testid: "pvw-run-rank-grid" });
  const tip = h("div", { className: "pvw-run-ranks-tip", testid: "pvw-run-rank-tip" });
  const gridBox = h("div", { className: "pvw-run-ranks-grid" }, [caption, canvas, tip]);
  const list = h("ol", { className: "pvw-run-report", testid: "pvw-run-report" });
  const notes = h("div", { className: "pvw-run-ranks-notes", testid: "pvw-run-ranks-notes" });
  const reportBox = h("div", { className: "pvw-run-report-box" }, [
    h("div", { className: "pvw-run-ranks-caption", text: "Cross-rank report" }),
    list,
    notes,
  ]);
  const el = h("div", { className: "pvw-run-ranks", testid: "pvw-run-ranks" }, [gridBox, reportBox]);

  function fillSelect(): void {
    if (!info) return;
    const flagged = new Set(info.report.flatMap((f) => f.ranks));
    select.replaceChildren(
      ...info.ranks.map((r) => {
        const opt = h("option", { text: `rank ${r}${flagged.has(r) ? " \u26a0" : ""}` });
        opt.value = String(r);
        return opt;
      }),
    );
    select.value = String(o.model.get("rank"));
  }

  function fillReport(): void {
    if (!info) return;
    const current = info;
    list.replaceChildren(
      ...current.report.map((f, k) => {
        const item = h("li", { className: `pvw-run-finding pvw-run-finding-${f.kind}`, testid: "pvw-run-finding" }, [
          h("span", { className: "pvw-run-finding-kind", text: kindLabel(f.kind) }),
          h("span", { text: f.message }),
        ]);
        item.title = "Show this rank, step and layer";
        item.addEventListener("click", () => {
          const t = findingTarget(f, current.ranks);
          o.commit({ rank: t.rank, step: t.step, ...(t.layer || f.kind !== "unsynced" ? { layer: t.layer } : {}) });
        });
        if (f.diff) {
          const diff = button(
            "graph diff",
            "The backward graph of a rank without the gradient against one with it",
            () => o.showDiff(k, f),
            "pvw-run-finding-diff",
          );
          diff.addEventListener("click", (event) => event.stopPropagation());
          item.append(diff);
        }
        return item;
      }),
    );
    if (current.report.length === 0)
      list.append(h("li", { className: "pvw-run-finding-none", text: "No cross-rank problem found." }));
    // One line each: a note is a clause without a full stop, run together they read as one.
    notes.replaceChildren(...current.notes.map((note) => h("div", { text: note })));
  }

  function draw(): void {
    const layers = o.layers();
    if (!info || !grid) {
      canvas.hidden = true;
      return;
    }
    const R = info.ranks.length;
    const L = layers.length;
    const colW = Math.max(3, Math.min(24, Math.floor(480 / Math.max(R, 1))));
    const rowH = Math.max(1, Math.min(12, Math.floor(MAX_HEIGHT / Math.max(L, 1))));
    canvas.hidden = false;
    canvas.width = colW * R;
    canvas.height = rowH * L;
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    const scale = o.scale();
    const image = ctx.createImageData(canvas.width, canvas.height);
    for (let r = 0; r < R; r++)
      for (let l = 0; l < L; l++) {
        const [red, green, blue] = scale.rgb(grid[r * L + l]);
        for (let y = l * rowH; y < (l + 1) * rowH; y++)
          for (let x = r * colW; x < (r + 1) * colW; x++) {
            const at = (y * canvas.width + x) * 4;
            image.data.set([red, green, blue, 255], at);
          }
      }
    ctx.putImageData(image, 0, 0);
    const shown = info.ranks.indexOf(o.model.get("rank"));
    const picked = layers.indexOf(o.model.get("layer"));
    ctx.lineWidth = 2;
    ctx.strokeStyle = "#ff7f0e";
    if (shown >= 0) ctx.strokeRect(shown * colW + 1, 1, colW - 2, canvas.height - 2);
    if (picked >= 0) {
      ctx.strokeStyle = "#333";
      ctx.lineWidth = 1;
      ctx.strokeRect(0.5, picked * rowH + 0.5, canvas.width - 1, rowH - 1);
    }
    canvas.dataset.ranks = String(R);
  }

  function cell(event: MouseEvent): { rank: number; layer: number } | null {
    const box = canvas.getBoundingClientRect();
    return info
      ? cellAt(
          event.clientX - box.left,
          event.clientY - box.top,
          box.width,
          box.height,
          info.ranks.length,
          o.layers().length,
        )
      : null;
  }
  canvas.addEventListener("mousemove", (event) => {
    const c = cell(event);
    if (!c || !info || !grid) return;
    const v = grid[c.rank * o.layers().length + c.layer];
    const what = Number.isNaN(v) ? "NaN/Inf gradient" : v < 0 ? "no gradient" : `norm ${formatLogged(v)}`;
    tip.textContent = `rank ${info.ranks[c.rank]}, ${o.layers()[c.layer] || "(model)"}: ${what}`;
  });
  canvas.addEventListener("click", (event) => {
    const c = cell(event);
    if (c && info) o.commit({ rank: info.ranks[c.rank], layer: o.layers()[c.layer] });
  });

  function update(): void {
    info = decodeRanks(o.model.get("_ranks"));
    el.hidden = select.hidden = !info;
    if (!info) return;
    grid = rankGrid(o.model.get("_rank_norms"), info.ranks.length, o.layers().length);
    const step = o.model.get("_rank_step");
    caption.textContent =
      step >= 0
        ? `Gradient norm per layer at step ${step}, ranks ${rankSpan(info.ranks)} (world size ${info.worldSize}); click: show that rank`
        : "Pick a step to compare the ranks";
    fillSelect();
    fillReport();
    draw();
  }

  return { select, el, update, running: () => !!info?.running };
}
