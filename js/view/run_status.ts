// The run explorer's status line (ui/run_explorer.ts shows it): what the shown log holds, and
// what it does not (parameters made trainable after the run started: runs/unwatched.py). Pure.
import type { RunData } from "./run_data";

/** run.json's `unwatched_params`: each notice's step and parameter names. */
function unwatchedNames(meta: Record<string, unknown>): { names: string[]; step: number } | null {
  const notes = meta.unwatched_params;
  if (!Array.isArray(notes) || notes.length === 0) return null;
  const names: string[] = [];
  let step = Number.POSITIVE_INFINITY;
  for (const note of notes) {
    if (!note || typeof note !== "object") continue;
    const { params, step: at } = note as { params?: unknown; step?: unknown };
    if (Array.isArray(params)) names.push(...params.filter((p): p is string => typeof p === "string"));
    if (typeof at === "number") step = Math.min(step, at);
  }
  return names.length > 0 ? { names, step } : null;
}

/** The line; `running`: the run (or a rank of it) is still being written; `live`: it is
 * read again as it grows. */
export function runStatusText(data: RunData, running: boolean, live: boolean): string {
  const { desc, S } = data;
  const meta = desc.meta;
  const span = S ? `${data.steps[0]}\u2013${data.steps[S - 1]}` : "none yet";
  const every = meta.every ? ` (every ${String(meta.every)} steps)` : "";
  const problems = desc.anomalies.length;
  let text =
    `${S} steps (${span}), ${data.L} layers, ${desc.params.length} parameters, ` +
    `${desc.captured.length} full captures${every}; ${problems} problem${problems === 1 ? "" : "s"}; ` +
    `run ${String(meta.status ?? "unknown")}${running && live ? ", refreshing" : ""}`;
  const unwatched = unwatchedNames(meta);
  if (unwatched) {
    const n = unwatched.names.length;
    const first = unwatched.names.slice(0, 2).join(", ") + (n > 2 ? ", \u2026" : "");
    const at = Number.isFinite(unwatched.step) ? ` (seen at step ${unwatched.step})` : "";
    text += `; ${n} parameter${n === 1 ? "" : "s"} made trainable after the run started not recorded${at}: ${first}`;
  }
  return text;
}
