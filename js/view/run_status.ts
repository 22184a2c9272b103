// The run explorer's status line (ui/run_explorer.ts shows it): what the shown log holds, and
// what it does not (parameters made trainable after the run started: runs/unwatched.py). Pure.
import { isProblem, type RunData } from "./run_data";

type Noted = { names: string[]; step: number };

/** run.json's `unwatched_params`: the parameters made trainable after the start, and those of
 * them that replaced a watched one of the same name (`replaced`: a layer swapped mid-run), each
 * with the first step it was seen at. */
function unwatchedNames(meta: Record<string, unknown>): { fresh: Noted; replaced: Noted } {
  const fresh: Noted = { names: [], step: Number.POSITIVE_INFINITY };
  const replaced: Noted = { names: [], step: Number.POSITIVE_INFINITY };
  const notes = meta.unwatched_params;
  for (const note of Array.isArray(notes) ? notes : []) {
    if (!note || typeof note !== "object") continue;
    const { params, step: at, replaced: swapped } = note as { params?: unknown; step?: unknown; replaced?: unknown };
    const taken = new Set(Array.isArray(swapped) ? swapped : []);
    for (const p of Array.isArray(params) ? params : []) {
      if (typeof p !== "string") continue;
      const into = taken.has(p) ? replaced : fresh;
      into.names.push(p);
      if (typeof at === "number") into.step = Math.min(into.step, at);
    }
  }
  return { fresh, replaced };
}

function listed({ names, step }: Noted): string {
  const n = names.length;
  const at = Number.isFinite(step) ? ` (seen at step ${step})` : "";
  return `${n} parameter${n === 1 ? "" : "s"}${at}: ${names.slice(0, 2).join(", ")}${n > 2 ? ", \u2026" : ""}`;
}

/** "41 s", "12 min", "3 h", "2 days". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}

/** A run.json saying "running" whose writer may be gone: a process ended by SIGTERM (Paddle's
 * handler aborts: no atexit) or one on another host (the reader cannot look for its pid).
 * Silent for longer than 10 min and 20 of its mean steps: said so; else how long ago. `now`:
 * the page's clock while live, the time it was read for a saved page. */
function runningWords(data: RunData, live: boolean, now: number): string {
  const { written, read_at: readAt } = data.desc;
  const at = live ? now : readAt;
  if (typeof written !== "number" || typeof at !== "number") return "run running";
  const age = at - written;
  const started = Date.parse(String(data.desc.meta.started ?? "")) / 1000;
  const mean = data.S > 0 && Number.isFinite(started) ? Math.max(0, written - started) / data.S : 0;
  if (age > Math.max(600, 20 * mean)) {
    return `run.json says running, but no step written for ${duration(age)}: the process may be gone (killed, or ended without closing its log)`;
  }
  // No step yet: `written` is when the watch started (run.json's time), not a step's.
  if (data.S === 0) return `run running, no step written yet (started ${duration(age)} ago)`;
  return `run running, last step ${duration(age)} ago`;
}

/** The line; `running`: the run (or a rank of it) is still being written; `live`: it is
 * read again as it grows; `now`: the page's clock (epoch seconds). */
export function runStatusText(data: RunData, running: boolean, live: boolean, now = Date.now() / 1000): string {
  const { desc, S } = data;
  const meta = desc.meta;
  const span = S ? `${data.steps[0]}\u2013${data.steps[S - 1]}` : "none yet";
  const every = meta.every ? ` (every ${String(meta.every)} steps)` : "";
  // Information (the steps a GradScaler skipped) is not a problem: the picker says so too.
  const problems = desc.anomalies.filter(isProblem).length;
  const info = desc.anomalies.length - problems;
  // counts worded by number: "1 layer, 1 parameter, 1 full capture" (it said "1 layers")
  const n = (k: number, word: string): string => `${k} ${word}${k === 1 ? "" : "s"}`;
  let text =
    `${n(S, "step")} (${span}), ${n(data.L, "layer")}, ${n(desc.params.length, "parameter")}, ` +
    `${n(desc.captured.length, "full capture")}${every}; ${n(problems, "problem")}` +
    `${info ? ` (${info} for information)` : ""}; ` +
    `${meta.status === "running" ? runningWords(data, live, now) : `run ${String(meta.status ?? "unknown")}`}` +
    `${running && live ? ", refreshing" : ""}`;
  const { fresh, replaced } = unwatchedNames(meta);
  if (fresh.names.length) {
    const n = fresh.names.length;
    const first = fresh.names.slice(0, 2).join(", ") + (n > 2 ? ", \u2026" : "");
    const at = Number.isFinite(fresh.step) ? ` (seen at step ${fresh.step})` : "";
    text += `; ${n} parameter${n === 1 ? "" : "s"} made trainable after the run started not recorded${at}: ${first}`;
  }
  // Their rows are not these parameters' gradients: the old tensors', 0 once cleared.
  if (replaced.names.length)
    text += `; replaced after the run started, their rows hold the old tensors' gradients, not the new ones': ${listed(replaced)}`;
  return text;
}
