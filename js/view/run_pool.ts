// Columns of the layer x step heatmap, downsampled to the canvas's pixel width by
// max-pooling: a pixel column stands for the largest norm of its steps, so a one-step spike
// among thousands still shows. A step flagged bad (NaN/Inf gradient elements) or a NaN norm
// makes its column NaN: non-finite wins over everything. Pure.

/** Steps [lo, hi) that pixel column `b` of `width` stands for, within window [from, to). */
export function binRange(from: number, to: number, width: number, b: number): [number, number] {
  const n = to - from;
  const lo = from + Math.floor((b * n) / width);
  const hi = Math.max(lo + 1, from + Math.floor(((b + 1) * n) / width));
  return [lo, Math.min(hi, to)];
}

/** Pixel column of step index `i` in window [from, to) drawn `width` wide. */
export function columnOf(from: number, to: number, width: number, i: number): number {
  return Math.floor(((i - from) * width) / (to - from));
}

/** Row `row` of the step-major (S x L) matrix, max-pooled over window [from, to) into
 * `width` values. */
export function poolRow(
  norms: Float32Array,
  bad: Uint8Array | null,
  L: number,
  row: number,
  from: number,
  to: number,
  width: number,
  out?: Float32Array,
): Float32Array {
  const result = out ?? new Float32Array(width);
  for (let b = 0; b < width; b++) {
    const [lo, hi] = binRange(from, to, width, b);
    let best = -Infinity;
    let nan = false;
    for (let i = lo; i < hi; i++) {
      const v = norms[i * L + row];
      if (Number.isNaN(v) || (bad !== null && bad[i * L + row] !== 0)) {
        nan = true;
        break;
      }
      if (v > best) best = v;
    }
    result[b] = nan ? NaN : best;
  }
  return result;
}

/** The step index in pixel column `b` whose value in `row` is largest (NaN first): what a
 * click on that cell picks, so the spike the cell shows is the step picked. */
export function argmaxInBin(
  norms: Float32Array,
  bad: Uint8Array | null,
  L: number,
  row: number,
  from: number,
  to: number,
  width: number,
  b: number,
): number {
  const [lo, hi] = binRange(from, to, width, b);
  let at = lo;
  let best = -Infinity;
  for (let i = lo; i < hi; i++) {
    const v = norms[i * L + row];
    if (Number.isNaN(v) || (bad !== null && bad[i * L + row] !== 0)) return i;
    if (v > best) {
      best = v;
      at = i;
    }
  }
  return at;
}

/** min and max of `values` over each pixel column (NaN left out; a column of NaN only: NaN):
 * the loss curve drawn as its envelope keeps its spikes too. */
export function envelope(
  values: Float64Array,
  from: number,
  to: number,
  width: number,
): { min: Float64Array; max: Float64Array } {
  const min = new Float64Array(width);
  const max = new Float64Array(width);
  for (let b = 0; b < width; b++) {
    const [lo, hi] = binRange(from, to, width, b);
    let mn = Infinity;
    let mx = -Infinity;
    for (let i = lo; i < hi; i++) {
      const v = values[i];
      if (Number.isNaN(v)) continue;
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
    min[b] = mn <= mx ? mn : NaN;
    max[b] = mn <= mx ? mx : NaN;
  }
  return { min, max };
}
