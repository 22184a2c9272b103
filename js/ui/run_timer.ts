// The run explorer's auto refresh: while the run is being written, `tick` runs every
// AUTO_REFRESH_MS (the kernel re-reads the run; the status line says how long it has been
// silent). One timer per explorer, stopped with it.

/** While the run is being written, the page asks the kernel to re-read it this often. */
export const AUTO_REFRESH_MS = 5_000;

/** `set(on)`: the timer running or not (idempotent). */
export function autoRefresher(tick: () => void): (on: boolean) => void {
  let timer: ReturnType<typeof setInterval> | null = null;
  return (on) => {
    if (on && timer === null) timer = setInterval(tick, AUTO_REFRESH_MS);
    if (!on && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}
