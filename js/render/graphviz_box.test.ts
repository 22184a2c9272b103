import { describe, expect, it } from "vitest";
import { graphvizBox } from "./graphviz_box";

const HEAD = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Title: backward Pages: 1 -->
<svg width="212pt" height="360pt"
 viewBox="0.00 0.00 212.00 360.00" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 355.56)">
<title>backward</title>`;

describe("graphvizBox", () => {
  it("reads the drawing's box from Graphviz's header, in the top group's coordinates", () => {
    const box = graphvizBox(HEAD);
    expect(box?.x).toBeCloseTo(-4);
    expect(box?.y).toBeCloseTo(-355.56);
    expect(box?.width).toBeCloseTo(212);
    expect(box?.height).toBeCloseTo(360);
  });

  it("gives up on a scaled or rotated drawing, or no header", () => {
    expect(graphvizBox(HEAD.replace("scale(1 1)", "scale(0.5 0.5)"))).toBeNull();
    expect(graphvizBox(HEAD.replace("rotate(0)", "rotate(-90)"))).toBeNull();
    expect(graphvizBox("<svg></svg>")).toBeNull();
    expect(graphvizBox(HEAD.replace('viewBox="0.00 0.00 212.00 360.00"', 'viewBox="0 0 0 0"'))).toBeNull();
  });
});
