// What the run explorer's detail says of a picked step that was not captured in full. Pure.

/** "No full capture of step 6543: its per-parameter summary (nearest full capture: step 0)."
 * `near`: the captures before and after it (view/run_data neighbourCapture). It said "full
 * captures nearby: 0", which reads as a count of none, not as step 0. */
export function noCaptureText(step: number, near: readonly number[]): string {
  const steps = near.length === 1 ? `step ${near[0]}` : `steps ${near.join(" and ")}`;
  const where = near.length ? ` (nearest full capture${near.length === 1 ? "" : "s"}: ${steps})` : "";
  return `No full capture of step ${step}: its per-parameter summary${where}.`;
}
