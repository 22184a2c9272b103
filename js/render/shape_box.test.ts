import { describe, expect, it } from "vitest";
import { type Shape, shapeBox } from "./shape_box";

const shape = (tag: string, attrs: Record<string, string>): Shape => ({ tag, attr: (n) => attrs[n] ?? null });

describe("shapeBox", () => {
  it("spans a polygon's points (Graphviz's node and cluster boxes)", () => {
    const box = shapeBox([shape("polygon", { points: "8,-4 8,-40 120.5,-40 120.5,-4 8,-4" })]);
    expect(box).toEqual({ x: 8, y: -40, width: 112.5, height: 36 });
  });

  it("spans an ellipse from its centre and radii", () => {
    expect(shapeBox([shape("ellipse", { cx: "50", cy: "-18", rx: "27", ry: "18" })])).toEqual({
      x: 23,
      y: -36,
      width: 54,
      height: 36,
    });
  });

  it("spans a rounded cluster's path and an edge's path and arrow head together", () => {
    const path = shape("path", { d: "M20,-8C20,-8 200,-8 200,-8C206,-8 212,-14 212,-20 212,-20 212,-96 212,-96" });
    const arrow = shape("polygon", { points: "215.5,-100 212,-110 208.5,-100 215.5,-100" });
    expect(shapeBox([path, arrow])).toEqual({ x: 20, y: -110, width: 195.5, height: 102 });
  });

  it("reads exponents and leaves out shapes without coordinates", () => {
    const box = shapeBox([shape("polygon", { points: "1e1,-2.5e1 3,4" }), shape("path", {})]);
    expect(box).toEqual({ x: 3, y: -25, width: 7, height: 29 });
  });

  it("is null when no shape has coordinates (the caller lays the element out instead)", () => {
    expect(shapeBox([])).toBeNull();
    expect(shapeBox([shape("ellipse", { cx: "1" })])).toBeNull();
  });
});
