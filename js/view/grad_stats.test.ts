import { describe, expect, it } from "vitest";
import {
  aggregate,
  aggregateText,
  extremeEdges,
  firstNonFinite,
  formatLogged,
  formatNorm,
  formatShare,
  NONFINITE_COLOUR,
  normScale,
  rampClass,
  statsItems,
  statsLine,
  ZERO_COLOUR,
} from "./grad_stats";
import type { GradStats, GraphEdge, GraphPayload } from "./types";

const s = (norm: number, extra: Partial<GradStats> = {}): GradStats => ({
  norm,
  max_abs: norm / 2,
  mean_abs: norm / 10,
  zero_fraction: 0,
  nan: 0,
  inf: 0,
  ...extra,
});
const edge = (id: string, source: string, stats?: GradStats): GraphEdge => ({
  id,
  source,
  target: "t",
  grad: null,
  ...(stats ? { stats } : {}),
});
const graph = (edges: GraphEdge[], meta: Record<string, unknown> = {}): GraphPayload => ({
  schema_version: "2.0",
  nodes: [],
  edges,
  groups: [],
  meta,
});

describe("gradient statistics on the view", () => {
  const g = graph([
    edge("e0", "a", s(1e-4)),
    edge("e1", "a", s(1e2)),
    edge("e2", "b", s(1, { nan: 3 })),
    edge("e3", "b", s(0, { zero_fraction: 1 })),
    edge("e4", "c"),
  ]);

  it("colours by log10 norm from the smallest to the largest, NaN/Inf red, zeros grey", () => {
    const scale = normScale(g)!;
    expect([scale.lo, scale.hi]).toEqual([-4, 2]);
    expect(scale.colour(g.edges[0].stats)).toBe("#440154");
    expect(scale.colour(g.edges[1].stats)).toBe("#1e9c89");
    expect(scale.colour(g.edges[2].stats)).toBe(NONFINITE_COLOUR);
    expect(scale.colour(g.edges[3].stats)).toBe(ZERO_COLOUR);
    expect(scale.colour(g.edges[4].stats)).toBeNull();
    expect(scale.stops[0].norm).toBeCloseTo(1e-4);
    expect(scale.stops[scale.stops.length - 1].norm).toBeCloseTo(1e2);
  });

  it("has no scale without statistics", () => {
    expect(normScale(graph([edge("e0", "a")]))).toBeNull();
  });

  it("ranks the finite edges", () => {
    expect(extremeEdges(g, 2, "largest").map((e) => e.id)).toEqual(["e1", "e0"]);
    expect(extremeEdges(g, 2, "smallest").map((e) => e.id)).toEqual(["e3", "e0"]);
  });

  it("adds up what a group's nodes send", () => {
    const out = new Map<string, GraphEdge[]>();
    for (const e of g.edges) out.set(e.source, [...(out.get(e.source) ?? []), e]);
    const a = aggregate(["a", "b"], out);
    expect(a).toEqual({ edges: 4, maxNorm: 100, nan: 3, inf: 0 });
    expect(aggregateText(a)).toBe("max \u2016g\u2016 1.0e+2 \u00b7 3 NaN");
    expect(aggregateText(aggregate(["c"], out))).toBe("");
  });

  it("says it in words", () => {
    expect(statsLine(s(2e-3, { zero_fraction: 0.25, inf: 1 }))).toBe(
      // "max" and "mean" of |g|, as the inspector says: the mean of g itself may be negative
      "\u2016g\u2016 2.0e-3 \u00b7 max |g| 1.0e-3 \u00b7 mean |g| 2.0e-4 \u00b7 25% zeros \u00b7 1 Inf",
    );
    expect(formatNorm(0)).toBe("0");
    expect(firstNonFinite(graph([], { first_nonfinite: "n4" }))).toBe("n4");
    expect(firstNonFinite(graph([]))).toBeNull();
  });

  it("reads a run log's float32 inf as a size past float32's range, not an infinite gradient", () => {
    // runs/format.py stores norms as float32: a finite 4.2e38 is inf there, its NaN/Inf count 0
    expect(formatLogged(Infinity)).toBe("> 3.4e+38");
    expect(formatLogged(Math.fround(3e38))).toBe("3.0e+38");
    expect(formatLogged(NaN)).toBe("NaN");
    expect(formatLogged(0)).toBe("0");
  });

  it("never rounds a share of zeros to 0% or 100% unless it is exactly that", () => {
    // A ReLU layer with 1022 of 1024 gradient elements zero: not a dead, all-zero gradient.
    const live = s(2.83, { zero_fraction: 1022 / 1024 });
    expect(statsLine(live)).toContain("\u00b7 >99% zeros");
    expect(statsItems(live).find((r) => r.label === "zeros")?.value).toBe("99.8%");
    expect(statsItems(s(1, { zero_fraction: 4095 / 4096 })).find((r) => r.label === "zeros")?.value).toBe(">99.9%");
    expect(statsLine(s(1, { zero_fraction: 2 / 1024 }))).toContain("\u00b7 <1% zeros");
    expect(statsItems(s(1, { zero_fraction: 2 / 4096 })).find((r) => r.label === "zeros")?.value).toBe("<0.1%");
    expect([0, 1, 0.25, 0.996, 0.004, 0.5 / 100].map((f) => formatShare(f))).toEqual([
      "0%",
      "100%",
      "25%",
      ">99%",
      "<1%",
      "1%",
    ]);
    expect(formatShare(0.9984, 1)).toBe("99.8%");
  });

  it("names each ramp colour by a letter class (the dark theme redraws it)", () => {
    const scale = normScale(graph([edge("a", "x", s(1e-4)), edge("b", "x", s(1e2))]))!;
    expect(scale.stops.map((st) => rampClass(st.colour))).toEqual("abcdef".split("").map((l) => `pvw-ramp-${l}`));
    // No digit: d3-graphviz's transitions interpolate numbers in a class ("pvw-ramp-3" ended "pvw-ramp0").
    expect([NONFINITE_COLOUR, ZERO_COLOUR].map(rampClass)).toEqual(["", ""]);
  });
});
