// The run explorer's data (paddleviz_widget/runs/view_data.py): the run's description as JSON
// and its matrices as little-endian binary buffers, decoded here into typed arrays. Pure.

export interface RunParam {
  name: string;
  layer: string;
  shape: number[];
  dtype: string;
}

export interface RunAnomaly {
  step: number;
  kind: string; // "nonfinite" | "spike" | "vanishing" | "skipped" (information)
  layer: string;
  params: string[];
  value: number | null;
  threshold: number | null;
  message: string;
}

/** Kinds that are information, not problems (runs/anomaly.py INFORMATION): a step a GradScaler
 * skipped for an overflow of its scaled gradients, which it handles. */
const INFORMATION_KINDS: ReadonlySet<string> = new Set(["skipped"]);

export function isProblem(a: RunAnomaly): boolean {
  return !INFORMATION_KINDS.has(a.kind);
}

export interface RunDescription {
  path: string;
  meta: Record<string, unknown>;
  layers: string[];
  params: RunParam[];
  captured: number[];
  anomalies: RunAnomaly[];
  steps: number;
  /** Stretches of steps whose loss was NaN/Inf, [first, last] inclusive (a NaN in the loss
   * buffer may also be an unknown loss; runs/view_data.py nonfinite_loss). Older kernels and
   * saved pages: absent. */
  nonfinite_loss?: [number, number][];
  /** When the run last wrote a step, and when the kernel read it (epoch seconds). */
  written?: number | null;
  read_at?: number;
}

export interface RunData {
  desc: RunDescription;
  /** Recorded steps, ascending (S). */
  steps: Float64Array;
  /** Loss per recorded step, NaN where unknown (S). */
  loss: Float64Array;
  /** Layer gradient norms, step-major (S x L); -1: the layer had no gradient at that step. */
  norms: Float32Array;
  /** 1 where a gradient of the layer held NaN/Inf elements (S x L). */
  bad: Uint8Array;
  S: number;
  L: number;
  /** Smallest and largest finite non-zero norm in `norms` (null: none). */
  range: { lo: number; hi: number } | null;
  captured: Set<number>;
  layerIndex: Map<string, number>;
}

/** Bytes of a synced buffer (a DataView from the kernel, an ArrayBuffer, a typed array). */
export function bytesOf(value: unknown): Uint8Array | null {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return null;
}

/** A typed array over `bytes`, or over a copy of them where they are not aligned for it (a view
 * into a message need not be). Not copied when aligned: the page only reads these (a refresh
 * copied the whole run, 30 MB, to add a few steps: js/run_append.ts). */
function typed<T>(bytes: Uint8Array, size: number, make: (b: ArrayBufferLike, offset: number, length: number) => T): T {
  if (bytes.byteLength % size !== 0)
    throw new Error(`a buffer of ${bytes.byteLength} bytes is not a whole number of ${size}-byte values`);
  if (bytes.byteOffset % size === 0) return make(bytes.buffer, bytes.byteOffset, bytes.byteLength / size);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return make(copy.buffer, 0, bytes.byteLength / size);
}

export function float64s(value: unknown): Float64Array {
  const bytes = bytesOf(value) ?? new Uint8Array(0);
  return typed(bytes, 8, (b, o, n) => new Float64Array(b, o, n));
}

export function float32s(value: unknown): Float32Array {
  const bytes = bytesOf(value) ?? new Uint8Array(0);
  return typed(bytes, 4, (b, o, n) => new Float32Array(b, o, n));
}

/** Smallest and largest finite, non-zero value of `values` (null: none). */
export function positiveRange(values: Float32Array): { lo: number; hi: number } | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v > 0 && v < Infinity) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return lo <= hi ? { lo, hi } : null;
}

function isDescription(value: unknown): value is RunDescription {
  const d = value as RunDescription | null;
  return (
    !!d && Array.isArray(d.layers) && Array.isArray(d.params) && Array.isArray(d.captured) && Array.isArray(d.anomalies)
  );
}

/** The colour range of `norms`: from `prev`'s where `norms` only adds rows after the same bytes
 * (a refresh's append: js/run_append.ts keeps them in place), else scanned whole. */
function rangeOf(norms: Float32Array, L: number, prev: RunData | null): RunData["range"] {
  const p = prev?.norms;
  if (!prev || !p || prev.L !== L || p.buffer !== norms.buffer || p.byteOffset !== norms.byteOffset)
    return positiveRange(norms);
  if (p.length > norms.length) return positiveRange(norms);
  const added = positiveRange(norms.subarray(p.length));
  if (!prev.range || !added) return prev.range ?? added;
  return { lo: Math.min(prev.range.lo, added.lo), hi: Math.max(prev.range.hi, added.hi) };
}

/** The run as the page draws it, or the sentence saying why it cannot be read; `prev`: what
 * was drawn before (its colour range is reused when only steps were appended). */
export function decodeRun(
  desc: unknown,
  steps: unknown,
  loss: unknown,
  norms: unknown,
  bad: unknown,
  prev: RunData | null = null,
): RunData | string {
  if (!isDescription(desc)) return "No run to show yet (the run's description has not arrived).";
  try {
    const s = float64s(steps);
    const l = float64s(loss);
    const n = float32s(norms);
    const b = bytesOf(bad) ?? new Uint8Array(0);
    const S = s.length;
    const L = desc.layers.length;
    if (l.length !== S || n.length !== S * L || b.length !== S * L) {
      return `The run's data is inconsistent: ${S} steps, ${l.length} loss values, ${n.length} norms and ${b.length} flags for ${L} layers.`;
    }
    return {
      desc,
      steps: s,
      loss: l,
      norms: n,
      bad: b,
      S,
      L,
      range: rangeOf(n, L, prev),
      captured: new Set(desc.captured),
      layerIndex: new Map(desc.layers.map((name, i) => [name, i])),
    };
  } catch (err) {
    return `The run's data cannot be read: ${String(err)}`;
  }
}

/** 1 for each recorded step whose loss was NaN or Inf: every step of each stretch the kernel
 * names; without that list (an older page), an Inf loss, or a NaN one at a step with a
 * non-finite anomaly (else NaN meant an unknown loss). */
export function nonfiniteLoss(d: RunData): Uint8Array {
  const out = new Uint8Array(d.S);
  const stretches = d.desc.nonfinite_loss;
  if (Array.isArray(stretches)) {
    for (const [first, last] of stretches) {
      for (let i = lowerBound(d.steps, first); i < d.S && d.steps[i] <= last; i++) out[i] = 1;
    }
    return out;
  }
  const flagged = new Set(d.desc.anomalies.filter((a) => a.kind === "nonfinite").map((a) => a.step));
  for (let i = 0; i < d.S; i++) {
    const v = d.loss[i];
    if (v === Infinity || v === -Infinity || (Number.isNaN(v) && flagged.has(d.steps[i]))) out[i] = 1;
  }
  return out;
}

/** The first index of the ascending `steps` at or after `step`. */
function lowerBound(steps: Float64Array, step: number): number {
  let lo = 0;
  let hi = steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid] < step) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of `step` in the ascending `steps`, or of the nearest recorded step. */
export function nearestIndex(steps: Float64Array, step: number): number {
  let lo = 0;
  let hi = steps.length - 1;
  if (hi < 0) return -1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid] < step) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(steps[lo - 1] - step) <= Math.abs(steps[lo] - step)) return lo - 1;
  return lo;
}

/** One step's per-parameter summary ((4, P): norm, max|g|, NaN, Inf), float32, or float64 when
 * a NaN/Inf count is past float32's exact integers (2**24: runs/view_data.py summary_width). */
export interface ParamSummary {
  norm: Float32Array | Float64Array;
  maxAbs: Float32Array | Float64Array;
  nan: Float32Array | Float64Array;
  inf: Float32Array | Float64Array;
}

export function decodeSummary(value: unknown, P: number): ParamSummary | string {
  // float64 by its size: 4P values of 8 bytes (float32's 4P would be 16P bytes)
  const wide = P > 0 && (bytesOf(value)?.byteLength ?? 0) === 32 * P;
  const all = wide ? float64s(value) : float32s(value);
  if (all.length !== 4 * P)
    return `The step's summary has ${all.length} values, expected ${4 * P} (4 statistics x ${P} parameters).`;
  return {
    norm: all.subarray(0, P),
    maxAbs: all.subarray(P, 2 * P),
    nan: all.subarray(2 * P, 3 * P),
    inf: all.subarray(3 * P, 4 * P),
  };
}
