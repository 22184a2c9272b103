// Every stop of the |grad| ramp against the background it is drawn on, in both themes (WCAG
// 2 contrast ratio; 3:1 is the minimum for graphics): the light theme's ramp is the DOT colour
// (grad_stats.ts RAMP), the dark theme's is widget.css's --pvw-ramp-a ... -f. Backgrounds:
// widget.css's light fallback (#ffffff) and JupyterLab Dark's --jp-layout-color0 (#111111),
// each also under a layer cluster (--pvw-cluster: the text colour 4% over it).
import { describe, expect, it } from "vitest";
import { readText } from "../repo_files.mjs";
import { RAMP, ZERO_COLOUR } from "./grad_stats";

type Rgb = [number, number, number];

function rgb(hex: string): Rgb {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function luminance([r, g, b]: Rgb): number {
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

function contrast(a: Rgb, b: Rgb): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const mix = (top: Rgb, share: number, under: Rgb): Rgb => top.map((v, k) => v * share + under[k] * (1 - share)) as Rgb;

function darkRamp(): string[] {
  const css = readText("js/widget.css");
  const block = css.match(/body\[data-jp-theme-light="false"\] \.pvw-root \{([^}]*)\}/);
  if (!block) throw new Error("no dark-theme ramp block in widget.css");
  return "abcdef".split("").map((k) => {
    const m = block[1].match(new RegExp(`--pvw-ramp-${k}:\\s*(#[0-9a-fA-F]{6})`));
    if (!m) throw new Error(`no --pvw-ramp-${k} in the dark block`);
    return m[1];
  });
}

function lightBackground(): Rgb {
  const m = readText("js/widget.css").match(/--pvw-bg: var\(--jp-layout-color0, (#[0-9a-fA-F]{6})\)/);
  if (!m) throw new Error("no --pvw-bg fallback in widget.css");
  return rgb(m[1]);
}

const THEMES: [string, () => string[], Rgb, Rgb][] = [
  ["light", () => RAMP, lightBackground(), rgb("#1f2328")],
  ["dark", darkRamp, rgb("#111111"), [255, 255, 255]],
];

describe("the |grad| ramp's contrast", () => {
  for (const [theme, ramp, bg, fg] of THEMES) {
    it(`is at least 3:1 for every stop (and all-zero grey) on the ${theme} theme's background and clusters`, () => {
      const stops = ramp();
      expect(stops).toHaveLength(6);
      const low = [...stops, ZERO_COLOUR].flatMap((c) =>
        [bg, mix(fg, 0.04, bg)].map((under) => [c, contrast(rgb(c), under).toFixed(2)] as const),
      );
      expect(low.filter(([, r]) => Number(r) < 3)).toEqual([]);
    });
  }

  it("still runs one way, dark to light, so larger gradients read as brighter", () => {
    for (const [, ramp] of THEMES) {
      const l = ramp().map((c) => luminance(rgb(c)));
      expect(l.every((v, k) => k === 0 || v > l[k - 1])).toBe(true);
    }
  });
});
