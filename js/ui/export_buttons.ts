// The toolbar's SVG and PNG buttons: download the drawing as shown (render/svg_export.ts), as
// an .svg file, or as that SVG drawn to a canvas at 2x and saved as .png. Everything happens in
// the page (Blob URLs, no network), so it works in Jupyter and in a saved HTML page alike.
import { exportDrawing, svgFileText } from "../render/svg_export";
import { button, h } from "./dom";
import type { Message } from "./status";

export const FILE_STEM = "backward_graph";
export const PNG_SCALE = 2;
/** Most pixels a PNG gets (~160 MB of canvas memory): beyond, it is drawn at a lower scale. */
export const PNG_MAX_PIXELS = 40_000_000;
/** Longest side a canvas may have in every current browser. */
export const PNG_MAX_SIDE = 16_384;

/** Scale for a `width` x `height` px drawing: PNG_SCALE, or less to stay within the limits. */
export function pngScale(width: number, height: number): number {
  const fit = Math.min(PNG_MAX_SIDE / width, PNG_MAX_SIDE / height, Math.sqrt(PNG_MAX_PIXELS / (width * height)));
  return Math.min(PNG_SCALE, fit);
}

function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000); // the download has surely started by then
}

async function pngOf(svg: SVGSVGElement, width: number, height: number): Promise<Blob> {
  // The SVG's own size is the canvas's, so the browser rasterises the vectors at that size.
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  const url = URL.createObjectURL(new Blob([svgFileText(svg)], { type: "image/svg+xml" }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    const context = canvas.getContext("2d");
    if (!context) throw new Error(`this browser gives no ${width}x${height} px canvas`);
    context.drawImage(image, 0, 0, width, height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob(
        (blob) => (blob ? resolve(blob) : reject(new Error(`no PNG of ${width}x${height} px`))),
        "image/png",
      ),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** The two buttons; `drawn`: the SVG on screen; `say`: a line in the status bar. */
export function createExportButtons(drawn: () => SVGSVGElement | null, say: (message: Message) => void): HTMLElement {
  const exported = () => {
    const svg = drawn();
    const out = svg && exportDrawing(svg);
    if (!out) say({ text: "Nothing is drawn yet: there is nothing to save.", kind: "warn" });
    return out;
  };
  const saveSvg = (): void => {
    const out = exported();
    if (out) download(new Blob([svgFileText(out.svg)], { type: "image/svg+xml" }), `${FILE_STEM}.svg`);
  };
  const savePng = async (): Promise<void> => {
    const out = exported();
    if (!out) return;
    const scale = pngScale(out.width, out.height);
    const [w, h] = [Math.max(1, Math.round(out.width * scale)), Math.max(1, Math.round(out.height * scale))];
    try {
      download(await pngOf(out.svg, w, h), `${FILE_STEM}.png`);
      if (scale < PNG_SCALE) {
        const why = `${PNG_SCALE}x would pass what a canvas safely holds`;
        say({
          text: `PNG saved at ${scale.toFixed(2)}x (${w}x${h} px): ${why}. The SVG has every detail.`,
          kind: "info",
        });
      }
    } catch (err) {
      say({
        text: `Could not make the PNG (${err instanceof Error ? err.message : String(err)}); the SVG button saves the drawing.`,
        kind: "error",
      });
    }
  };
  return h("span", { className: "pvw-export" }, [
    h("span", { className: "pvw-sep" }),
    button("SVG", "Download the drawing as shown, as an SVG file", saveSvg, "pvw-save-svg"),
    button(
      "PNG",
      `Download the drawing as shown, as a PNG image (${PNG_SCALE}x)`,
      () => void savePng(),
      "pvw-save-png",
    ),
  ]);
}
