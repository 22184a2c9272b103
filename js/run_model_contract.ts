// The run explorer's synced model, its one contract with the kernel (RunWidget's traits tagged
// sync=True, paddleviz_widget/runs/view_widget.py): every key the run page reads or writes, its
// type and who writes it, in the form of ./model_contract.ts (the graph explorer's). The
// picked step's graph is drawn on a page model of its own (ui/run_graph.ts), under that
// contract. tests/test_model_contract.py and js/model_contract.test.ts check both.
import type { KeySpec } from "./model_contract";

export type RunModel = {
  /** The run's description (runs/view_data.py run_description): meta, layers, anomalies. */
  run: unknown;
  /** Recorded steps, float64 (one buffer). */
  _steps: unknown;
  /** The loss per step, float32, NaN where unknown. */
  _loss: unknown;
  /** Gradient norms, float32, steps × layers. */
  _norms: unknown;
  /** A NaN/Inf flag per (step, layer) cell, uint8. */
  _bad: unknown;
  /** CSS height of the run explorer. */
  height: string;
  /** The picked step (-1: none yet; the page picks one). */
  step: number;
  /** The selected layer path ("" for none). */
  layer: string;
  /** The rank shown, in a multi-rank run (-1: a single-rank run). */
  rank: number;
  /** The ranks, notes and cross-rank report (runs/view_ranks.py); {} for one rank. */
  _ranks: unknown;
  /** Each rank's layer norms at `_rank_step`, float32 ranks × layers. */
  _rank_norms: unknown;
  /** The step `_rank_norms` is of. */
  _rank_step: number;
  /** A saved page's whole run (runs/view_page.py): no kernel to ask there. */
  _page?: unknown;
};

/** Every key of RunModel, once (the compiler checks that none is missing or extra). */
export const RUN_MODEL_KEYS = {
  run: { type: "object", writer: "kernel" },
  _steps: { type: "bytes", writer: "kernel" },
  _loss: { type: "bytes", writer: "kernel" },
  _norms: { type: "bytes", writer: "kernel" },
  _bad: { type: "bytes", writer: "kernel" },
  height: { type: "string", writer: "kernel" },
  step: { type: "integer", writer: "both" },
  layer: { type: "string", writer: "both" },
  rank: { type: "integer", writer: "both" },
  _ranks: { type: "object", writer: "kernel" },
  _rank_norms: { type: "bytes", writer: "kernel" },
  _rank_step: { type: "integer", writer: "kernel" },
  _page: { type: "object", writer: "saved page" },
} as const satisfies { readonly [K in keyof Required<RunModel>]: KeySpec };
