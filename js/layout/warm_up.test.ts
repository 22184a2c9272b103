// The worker's warm-up DOTs are ones Graphviz lays out, shaped as the explorer's: the worker
// swallows a warm-up's errors, so a broken one would compile nothing and say nothing. Laid out
// here by the system's `dot` (the same Graphviz, native; the browser tests run the WASM).
import { describe, expect, it } from "vitest";
import { systemDotSvg as layout } from "./system_dot.mjs";
import { WARM_UP_DOTS, warmUpLargeDot } from "./warm_up";

describe("the layout worker's warm-up", () => {
  it("lays out every DOT, the large one at a default view's size with clusters and labels", () => {
    for (const dot of WARM_UP_DOTS) expect(layout(dot)).toContain("<svg");
    const svg = layout(warmUpLargeDot());
    expect(svg.match(/class="node"/g)).toHaveLength(65);
    expect(svg.match(/class="cluster"/g)).toHaveLength(8);
    expect(svg).toContain("float32[2, 128]"); // edge labels
    expect(svg.match(/<ellipse/g)?.length).toBeGreaterThan(10); // parameters
  });
});
