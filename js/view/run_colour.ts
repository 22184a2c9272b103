// Colours of the heatmap: log10 of a gradient norm on the explorer's viridis ramp, between the
// run's smallest and largest finite non-zero norms; NaN/Inf and zero as the graph shows them.
import { NONFINITE_COLOUR, ZERO_COLOUR } from "./grad_stats";

const RAMP = ["#440154", "#414487", "#2a788e", "#22a884", "#7ad151", "#fde725"];

type Rgb = [number, number, number];

function rgb(hex: string): Rgb {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

const STOPS = RAMP.map(rgb);
export const NONFINITE_RGB = rgb(NONFINITE_COLOUR);
export const ZERO_RGB = rgb(ZERO_COLOUR);
/** No value (a step not recorded for a layer): the background shows. */
export const EMPTY_RGB: Rgb = [255, 255, 255];

export interface LogColour {
  lo: number;
  hi: number;
  /** Position 0..1 of `value` on the scale (NaN for non-finite or <= 0). */
  position(value: number): number;
  rgb(value: number): Rgb;
  /** Legend ticks: norms at whole powers of ten within the range (at least the ends). */
  ticks(): { at: number; norm: number }[];
}

/** The scale for norms between `lo` and `hi` (> 0). */
export function logColour(range: { lo: number; hi: number } | null): LogColour {
  const lo = Math.log10(range?.lo ?? 1);
  const hi = Math.log10(range?.hi ?? 1);
  const span = hi - lo;
  const position = (value: number): number => {
    if (!(value > 0) || value === Infinity) return NaN;
    if (span <= 0) return 1;
    return Math.min(1, Math.max(0, (Math.log10(value) - lo) / span));
  };
  return {
    lo,
    hi,
    position,
    rgb(value: number): Rgb {
      if (Number.isNaN(value) || value === Infinity || value === -Infinity) return NONFINITE_RGB;
      if (!(value > 0)) return value === 0 ? ZERO_RGB : EMPTY_RGB;
      const t = position(value) * (STOPS.length - 1);
      const k = Math.min(STOPS.length - 2, Math.floor(t));
      const f = t - k;
      const [a, b] = [STOPS[k], STOPS[k + 1]];
      return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f].map(Math.round) as Rgb;
    },
    ticks() {
      const out: { at: number; norm: number }[] = [];
      if (span <= 0) return [{ at: 1, norm: 10 ** hi }];
      const step = Math.max(1, Math.ceil(span / 6));
      for (let e = Math.ceil(lo - 1e-9); e <= hi + 1e-9; e += step)
        out.push({ at: (e - lo) / span, norm: Number(`1e${e}`) });
      if (out.length < 2)
        return [
          { at: 0, norm: 10 ** lo },
          { at: 1, norm: 10 ** hi },
        ];
      return out;
    },
  };
}

/** CSS gradient of the ramp, for the legend. */
export const RAMP_CSS = `linear-gradient(to right, ${RAMP.join(", ")})`;
