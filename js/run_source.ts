// Where the run explorer gets one picked step's summary and graph: the kernel (RunWidget in
// paddleviz_widget/runs/view_widget.py answers a custom message with binary buffers), or, in
// a saved page, the data embedded in the page (runs/view_page.py).
import type { AnyModel } from "@anywidget/types";
import { onAppend } from "./run_append";
import { decodeSummary, type ParamSummary } from "./view/run_data";

/** Message types, as runs/view_widget.py names them. */
export const STEP_MESSAGE = "pvw-run-step";
export const REFRESH_MESSAGE = "pvw-run-refresh";
/** How long a step's request may go unanswered before the page says the kernel is silent (a
 * kernel busy with a cell answers when the cell ends: the answer is shown then). */
const NO_ANSWER_MS = 15_000;

export interface StepData {
  step: number;
  summary: ParamSummary | null;
  graph: DataView | null;
  layerRows: unknown;
  error?: string;
  graphError?: string;
  /** A graph difference's title (fetchDiff). */
  title?: string;
}

export interface RunSource {
  /** A kernel that can re-read a run being written. */
  live: boolean;
  /** `slow(notice)`: the kernel has not answered for a while; the answer is still taken. */
  fetchStep(step: number, P: number, slow?: (notice: string) => void): Promise<StepData>;
  /** The graph difference of cross-rank finding `index` (a multi-rank run's missing gradient). */
  fetchDiff?(index: number, slow?: (notice: string) => void): Promise<StepData>;
  refresh(): void;
  /** Errors the kernel reports on refresh (a half-written file, ...). */
  onError(fn: (message: string) => void): void;
  destroy(): void;
}

interface Reply {
  type?: string;
  id?: number;
  step?: number;
  captured?: boolean;
  layer_rows?: unknown;
  error?: string;
  graph_error?: string;
  diff?: number;
  title?: string;
}

function asView(buffer: unknown): DataView | null {
  if (buffer instanceof DataView) return buffer;
  if (buffer instanceof ArrayBuffer) return new DataView(buffer);
  if (ArrayBuffer.isView(buffer)) return new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  return null;
}

/** One step's data from a reply (or a saved page's embedded data) and its buffers. */
export function stepFromReply(reply: Reply, buffers: unknown[], P: number): StepData {
  const step = Number(reply.step);
  if (reply.error) return { step, summary: null, graph: null, layerRows: null, error: reply.error };
  const summary = decodeSummary(asView(buffers[0]), P);
  if (typeof summary === "string") return { step, summary: null, graph: null, layerRows: null, error: summary };
  const graph = reply.captured ? asView(buffers[1]) : null;
  return { step, summary, graph, layerRows: reply.layer_rows ?? null, graphError: reply.graph_error };
}

/** A graph difference from a reply (or a saved page's embedded one); buffers[1]: its JSON. */
export function diffFromReply(reply: Reply, buffers: unknown[]): StepData {
  const none = { step: NaN, summary: null, graph: null, layerRows: null };
  if (reply.error) return { ...none, error: reply.error };
  const graph = asView(buffers[1]);
  if (!graph) return { ...none, error: "The graph difference did not arrive." };
  return { ...none, graph, layerRows: reply.layer_rows ?? null, title: reply.title };
}

// One widget shown in two cells (or two browser tabs on one notebook) is two views of one
// model: the kernel's answer to either reaches both. Their requests' ids are kept apart (one
// counter for the page, from a random start) so that a view never takes the answer to
// another's request as its own (a graph difference shown as a step's capture).
let lastRequest = Math.floor(Math.random() * 2 ** 40);

export function kernelSource(model: AnyModel): RunSource {
  const waiting = new Map<number, (reply: Reply, buffers: unknown[]) => void>();
  let errorFn: (message: string) => void = () => undefined;
  const onMessage = (msg: unknown, buffers: unknown): void => {
    const m = msg as Reply | null;
    if (m?.type === REFRESH_MESSAGE && m.error) errorFn(`Refresh failed: ${m.error}`);
    if (m && onAppend(model, m, Array.isArray(buffers) ? buffers : [])) return;
    if (m?.type !== STEP_MESSAGE || typeof m.id !== "number") return;
    waiting.get(m.id)?.(m, Array.isArray(buffers) ? buffers : []);
    waiting.delete(m.id);
  };
  model.on("msg:custom", onMessage);
  const ask = (
    what: Record<string, number>,
    label: string,
    read: (reply: Reply, buffers: unknown[]) => StepData,
    step: number,
    slow?: (notice: string) => void,
  ): Promise<StepData> => {
    const id = ++lastRequest;
    const failed = (error: string): StepData => ({ step, summary: null, graph: null, layerRows: null, error });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (waiting.has(id))
          slow?.(
            `The kernel has not answered for ${label} yet (it may be busy running a cell, or stopped); it shows here when it does.`,
          );
      }, NO_ANSWER_MS);
      waiting.set(id, (reply, buffers) => {
        clearTimeout(timer);
        resolve(read(reply, buffers));
      });
      try {
        model.send({ type: STEP_MESSAGE, id, ...what });
      } catch (err) {
        waiting.delete(id);
        clearTimeout(timer);
        resolve(failed(`The request could not be sent to the kernel (${String(err)}).`));
      }
    });
  };
  return {
    live: true,
    fetchStep(step, P, slow) {
      return ask({ step }, `step ${step}`, (reply, buffers) => stepFromReply(reply, buffers, P), step, slow);
    },
    fetchDiff(index, slow) {
      return ask({ diff: index }, "the graph difference", diffFromReply, NaN, slow);
    },
    refresh() {
      try {
        model.send({ type: REFRESH_MESSAGE });
      } catch {
        // no kernel any more: nothing new can come
      }
    },
    onError(fn) {
      errorFn = fn;
    },
    destroy() {
      model.off("msg:custom", onMessage);
      waiting.clear();
    },
  };
}

/** A saved page's data: every step's summary ((S, 4, P): float32, or float64 when a NaN/Inf
 * count is past float32's exact integers) and the captured graphs. */
export interface PageRunData {
  steps: Float64Array;
  summaries: Float32Array | Float64Array;
  graphs: Record<string, { graph: unknown; layer_rows: unknown }>;
  /** A multi-rank page's graph differences, by finding index (runs/view_page.py). */
  diffs?: Record<string, { graph?: unknown; layer_rows?: unknown; title?: string; error?: string }>;
}

export function pageSource(page: PageRunData): RunSource {
  const positions = new Map<number, number>();
  page.steps.forEach((s, i) => {
    positions.set(s, i);
  });
  return {
    live: false,
    fetchStep(step, P) {
      const at = positions.get(step);
      if (at === undefined)
        return Promise.resolve({
          step,
          summary: null,
          graph: null,
          layerRows: null,
          error: `Step ${step} is not in this page.`,
        });
      const rows = page.summaries.subarray(at * 4 * P, (at + 1) * 4 * P);
      const entry = page.graphs[String(step)];
      const graph = entry ? new DataView(new TextEncoder().encode(JSON.stringify(entry.graph)).buffer) : null;
      return Promise.resolve(
        stepFromReply({ step, captured: !!entry, layer_rows: entry?.layer_rows }, [rows, graph], P),
      );
    },
    fetchDiff(index) {
      const entry = page.diffs?.[String(index)];
      if (!entry?.graph)
        return Promise.resolve(diffFromReply({ error: entry?.error ?? "No graph difference in this page." }, []));
      const bytes = new TextEncoder().encode(JSON.stringify(entry.graph));
      return Promise.resolve(
        diffFromReply({ layer_rows: entry.layer_rows, title: entry.title }, [null, new DataView(bytes.buffer)]),
      );
    },
    refresh() {},
    onError() {},
    destroy() {},
  };
}
