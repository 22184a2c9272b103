// The toolbar's problem picker: the shown rank's own problems (its run log's anomalies; the
// information among them, such as a step a GradScaler skipped, in a group below them) and, in
// a multi-rank run, the cross-rank findings (values "x<k>") in a group of their own, so the
// toolbar never says "no problems" beside a cross-rank report that has findings. Picking one
// goes to its step (and a finding's rank and layer).
import type { AnyModel } from "@anywidget/types";
import type { RunModel } from "../run_model_contract";
import { h } from "./dom";
import { isProblem, type RunData } from "../view/run_data";
import { decodeRanks, findingTarget, problemsLabel } from "../view/run_ranks";

export interface ProblemPicker {
  el: HTMLSelectElement;
  /** Read the run's anomalies and `_ranks` again. */
  fill(): void;
}

export function createProblemPicker(o: {
  model: AnyModel<RunModel>;
  data: () => RunData | null;
  commit: (changes: Partial<RunModel>) => void;
}): ProblemPicker {
  const el = h("select", {
    className: "pvw-select",
    testid: "pvw-run-problems",
    title: "Problems found in the run: pick one to go to its step",
  });
  const option = (text: string, value: string): HTMLOptionElement => {
    const opt = h("option", { text });
    opt.value = value;
    return opt;
  };
  const group = (label: string, options: HTMLOptionElement[]): HTMLOptGroupElement => {
    const g = h("optgroup", {}, options);
    g.label = label;
    return g;
  };

  function fill(): void {
    const data = o.data();
    if (!data) return;
    const list = data.desc.anomalies;
    const info = decodeRanks(o.model.get("_ranks"));
    const cross = info?.report ?? [];
    const rank = info ? o.model.get("rank") : null;
    const keep = el.value;
    // Problems first; information (a step a GradScaler skipped) in a group of its own, below.
    const own = list.flatMap((a, k) => (isProblem(a) ? [option(a.message, String(k))] : []));
    const notes = list.flatMap((a, k) => (isProblem(a) ? [] : [option(a.message, String(k))]));
    const prefix = info ? `Rank ${String(rank)}: ` : "";
    el.replaceChildren(
      option(problemsLabel(own.length, rank, cross.length), ""),
      ...(info && own.length ? [group(`Rank ${String(rank)}`, own)] : own),
      ...(notes.length ? [group(`${prefix}for information`, notes)] : []),
      ...(cross.length
        ? [
            group(
              "Cross-rank",
              cross.map((f, k) => option(f.message, `x${k}`)),
            ),
          ]
        : []),
    );
    el.value = [...el.options].some((opt) => opt.value === keep) ? keep : "";
    el.disabled = list.length + cross.length === 0;
  }

  el.addEventListener("change", () => {
    const value = el.value;
    const info = decodeRanks(o.model.get("_ranks"));
    const f = value.startsWith("x") ? info?.report[Number(value.slice(1))] : undefined;
    if (f && info) {
      const t = findingTarget(f, info.ranks);
      o.commit({ rank: t.rank, step: t.step, ...(t.layer ? { layer: t.layer } : {}) });
      return;
    }
    const a = value === "" ? undefined : o.data()?.desc.anomalies[Number(value)];
    if (a) o.commit({ step: a.step, ...(a.layer ? { layer: a.layer } : {}) });
  });
  return { el, fill };
}
