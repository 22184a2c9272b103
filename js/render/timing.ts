// How long an animated redraw takes, and how long past that the draw loop (../draw_loop.ts)
// waits before it counts the drawing as stuck. Apart from ./drawing.ts so that the loop and
// its tests need none of d3.

/** Length of an animated redraw's transition (d3-graphviz). */
export const ANIMATION_MS = 450;

/** An animated drawing not done this long after it started never will: d3-graphviz runs its
 * transitions on animation frames, and in JupyterLab, about one page load in five, the
 * notebook's first widget had an animated render that never ran at all. Every later drawing
 * would wait behind it: the draw loop has the renderer replace it (Renderer.replaceStuck). */
export const STUCK_AFTER_MS = ANIMATION_MS + 1500;
