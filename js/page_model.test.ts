import { describe, expect, it } from "vitest";
import type { WidgetModel } from "./model_contract";
import { answerKernel } from "./kernel_sync";
import { createPageModel } from "./page_model";
import { autoDepth } from "./view/expansion";
import { buildIndex } from "./view/graph_index";
import { fixture } from "./view/test_fixtures";
import { pngScale, PNG_MAX_PIXELS, PNG_MAX_SIDE, PNG_SCALE } from "./ui/export_buttons";

/** The state export/standalone.py writes into a page (its graph aside). */
const pageState = (expanded: string[], edits: unknown[]): WidgetModel => ({
  graph: null,
  height: "100vh",
  selected: "",
  expanded,
  depth: -1,
  _request: { id: 1, depth: -1, edits },
  _resolved: [],
});

describe("the saved page's stand-in model", () => {
  it("fires a change event on a new value only, as Backbone does under ipywidgets", () => {
    const model = createPageModel({ expanded: ["g1"], depth: 1 });
    const seen: string[] = [];
    const onExpanded = (): void => void seen.push(`expanded=${String(model.get("expanded"))}`);
    model.on("change:expanded", onExpanded);
    model.on("change:depth", () => seen.push(`depth=${model.get("depth")}`));
    model.set("expanded", ["g1"]); // an equal copy: no event
    model.set("depth", 1);
    model.set("expanded", ["g1", "g2"]);
    model.set("depth", 0);
    model.off("change:expanded", onExpanded);
    model.set("expanded", []);
    expect(seen).toEqual(["expanded=g1,g2", "depth=0"]);
    expect(model.get("expanded")).toEqual([]);
  });

  it("gets the view a GraphWidget gets from the request standalone.py writes", () => {
    const index = buildIndex(fixture("resnet18"));
    const auto = createPageModel(pageState([], []));
    expect(answerKernel(auto, index, () => ({ depth: 0, expanded: [] }))).toBe(true);
    expect(auto.get("depth")).toBe(autoDepth(index));
    expect(auto.get("_resolved")).toEqual([1, 0]);
    expect(answerKernel(auto, index, () => ({ depth: 0, expanded: [] }))).toBe(false); // answered

    const open = [index.graph.groups[0].id];
    const given = createPageModel(pageState(open, [["set", open]]));
    answerKernel(given, index, () => ({ depth: 0, expanded: [] }));
    expect(given.get("expanded")).toEqual(open);
  });
});

describe("the PNG's scale", () => {
  it("is 2x, less only where the canvas would pass its limits", () => {
    expect(pngScale(800, 600)).toBe(PNG_SCALE);
    for (const [w, h] of [
      [20_000, 300],
      [3000, 13_000],
      [9000, 9000],
    ]) {
      const k = pngScale(w, h);
      expect(k).toBeLessThan(PNG_SCALE);
      expect(Math.max(w, h) * k).toBeLessThanOrEqual(PNG_MAX_SIDE + 1e-6);
      expect(w * h * k * k).toBeLessThanOrEqual(PNG_MAX_PIXELS * (1 + 1e-9));
    }
  });
});
