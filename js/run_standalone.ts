// Boot code of a saved run explorer page (paddleviz_widget/runs/view_page.py), as
// standalone.ts is for one graph: page_boot.ts imports the run_widget bundle and renders it on
// a stand-in model. The run's matrices are in the page as base64 of
// gzip (DecompressionStream undoes it): steps and loss float64, layer norms float32 (S x L), NaN/Inf flags uint8 (S x L),
// every step's summary float32 (S x 4 x P); the captured steps' graphs as JSON. A multi-rank
// page holds that for every rank (`per_rank`) and swaps the shown rank's in on a rank change.
import { bootPage, pageText } from "./page_boot";
import { createPageModel } from "./page_model";
import type { PageRunData } from "./run_source";
import type { RunModel } from "./run_model_contract";
import { gridAt } from "./view/run_ranks";

const PAGE_IDS = {
  host: "pvw-host",
  bundle: "pvw-bundle",
  state: "pvw-state",
  data: "pvw-run-data",
  graphs: "pvw-run-graphs",
};

async function gunzip(base64: string): Promise<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

interface RankData {
  steps: string;
  loss: string;
  norms: string;
  bad: string;
  summaries: string;
  /** 8: the summaries are float64 (a NaN/Inf count past 2**24: runs/view_page.py); else float32 */
  summary_width?: number;
  run?: unknown;
}

interface PackedPage extends Partial<RankData> {
  per_rank?: Record<string, RankData>;
  diffs?: PageRunData["diffs"];
}

interface RankKeys {
  run?: unknown;
  _steps: DataView;
  _loss: DataView;
  _norms: DataView;
  _bad: DataView;
  _page: PageRunData;
}

/** One rank's (or a single-rank page's) model keys from its packed data. */
async function rankKeys(
  data: RankData,
  graphs: PageRunData["graphs"],
  diffs: PageRunData["diffs"] | undefined,
): Promise<RankKeys> {
  const [steps, loss, norms, bad, summaries] = await Promise.all(
    [data.steps, data.loss, data.norms, data.bad, data.summaries].map((k) => gunzip(k)),
  );
  return {
    ...(data.run ? { run: data.run } : {}),
    _steps: new DataView(steps),
    _loss: new DataView(loss),
    _norms: new DataView(norms),
    _bad: new DataView(bad),
    _page: {
      steps: new Float64Array(steps),
      summaries: data.summary_width === 8 ? new Float64Array(summaries) : new Float32Array(summaries),
      graphs,
      diffs,
    },
  };
}

async function pageModel(): Promise<object> {
  const state = JSON.parse(pageText(PAGE_IDS.state)) as Record<string, unknown>;
  const packed = JSON.parse(pageText(PAGE_IDS.data)) as PackedPage;
  const graphs = JSON.parse(pageText(PAGE_IDS.graphs)) as Record<string, unknown>;
  if (!packed.per_rank) {
    const keys = await rankKeys(packed as RankData, graphs as RankKeys["_page"]["graphs"], undefined);
    return createPageModel<RunModel>({
      rank: -1,
      _ranks: {},
      _rank_step: -1,
      ...state,
      ...keys,
    } as unknown as RunModel);
  }
  // A multi-rank page: every rank's data; the shown rank's swapped in as the kernel does.
  const ranks = new Map<number, RankKeys>();
  for (const [rank, data] of Object.entries(packed.per_rank))
    ranks.set(Number(rank), await rankKeys(data, graphs[rank] as RankKeys["_page"]["graphs"], packed.diffs));
  const order = [...ranks.keys()].sort((a, b) => a - b);
  const L = ((state.run as { layers?: unknown[] }).layers ?? []).length;
  const gridOf = (step: number): DataView => {
    const per = order.map((r) => {
      const k = ranks.get(r) as RankKeys;
      return { steps: k._page.steps, norms: new Float32Array(k._norms.buffer), bad: new Uint8Array(k._bad.buffer) };
    });
    return new DataView(gridAt(per, L, step).buffer);
  };
  const shown = ranks.get(Number(state.rank)) ?? (ranks.get(order[0]) as RankKeys);
  const model = createPageModel<RunModel>({
    ...state,
    ...shown,
    _rank_norms: gridOf(Number(state.step)),
    _rank_step: Number(state.step),
  } as unknown as RunModel);
  model.on("change:rank", () => {
    const keys = ranks.get(model.get("rank"));
    if (keys) for (const [k, v] of Object.entries(keys)) model.set(k as keyof RunModel, v as never);
  });
  model.on("change:step", () => {
    model.set("_rank_norms", gridOf(model.get("step")));
    model.set("_rank_step", model.get("step"));
  });
  return model;
}

void bootPage(PAGE_IDS, "run explorer", pageModel);
