// Which drawing is a graph's first view (./first_views.ts), in the orders the kernel's
// messages and the drawings really come in (tests/browser/test_first_view_browser.py opens
// the tall LeNet this way in JupyterLab).
import { describe, expect, it } from "vitest";
import { createFirstViews } from "./first_views";

type Plan = { name: string };
const plan = (name: string): Plan => ({ name });

describe("a graph's first view", () => {
  it("is its first drawing on screen; later drawings keep the view", () => {
    const views = createFirstViews<Plan>();
    expect(views.read(false)).toBe(true);
    const first = plan("first");
    expect(views.started(first)).toBe(true);
    views.drawn(first);
    expect(views.started(plan("a click"))).toBe(false);
  });

  it("goes to the graph after GraphWidget(y)'s placeholder, which is never drawn", () => {
    const views = createFirstViews<Plan>();
    expect(views.read(true)).toBe(false); // `{}`: the comm opened before the graph was built
    expect(views.read(false)).toBe(true); // the graph, as an update
    expect(views.started(plan("graph"))).toBe(true);
  });

  it("is not used up by a drawing of the graph before it that ends after it was read", () => {
    const views = createFirstViews<Plan>();
    views.read(false);
    const old = plan("old graph");
    expect(views.started(old)).toBe(true);
    expect(views.read(false)).toBe(true); // `w.graph = other` while `old` is on its way
    views.drawn(old); // ends now, before the new graph's drawing starts
    const fresh = plan("new graph");
    expect(views.started(fresh)).toBe(true);
    views.drawn(fresh);
    expect(views.started(plan("later"))).toBe(false);
  });

  it("goes to the next drawing when the first one is superseded on its way", () => {
    const views = createFirstViews<Plan>();
    views.read(false);
    expect(views.started(plan("the kernel's guess"))).toBe(true); // superseded: never drawn
    const answer = plan("the page's answer");
    expect(views.started(answer)).toBe(true);
    views.drawn(answer);
    expect(views.started(plan("later"))).toBe(false);
  });

  it("is given to a blank graph set once something was drawn (drawn empty)", () => {
    const views = createFirstViews<Plan>();
    views.read(false);
    const first = plan("first");
    views.started(first);
    views.drawn(first);
    expect(views.read(true)).toBe(true);
    expect(views.started(plan("empty"))).toBe(true);
  });
});
