// What every saved page's boot does (standalone.ts for one graph, run_standalone.ts for a run):
// read its non-executed script elements, import the widget's own ESM bundle from a Blob URL (a
// file:// page cannot import a sibling file, and this keeps the page one file), then make
// anywidget's two calls, initialize({model}) and render({model, el}), on a stand-in model.
// Any failure is written into the page, in words, instead of a blank page.
interface WidgetModule {
  initialize?: (props: object) => unknown;
  render: (props: object) => unknown;
}

/** The text of the page's element `id` (written by the Python side). */
export function pageText(id: string): string {
  const el = document.getElementById(id);
  if (!el?.textContent) throw new Error(`the page has lost its #${id} element`);
  return el.textContent;
}

async function importBundle(bundleId: string): Promise<WidgetModule> {
  const source = JSON.parse(pageText(bundleId)) as string;
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return ((await import(url)) as { default: WidgetModule }).default;
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Boots the page: `makeModel` builds the stand-in model from the page's data; `what` names
 * the explorer in the message shown if it cannot start. */
export async function bootPage(
  ids: { host: string; bundle: string },
  what: string,
  makeModel: () => Promise<object> | object,
): Promise<void> {
  const host = document.getElementById(ids.host) ?? document.body;
  try {
    const widget = await importBundle(ids.bundle);
    const model = await makeModel();
    const signal = new AbortController().signal;
    await widget.initialize?.({ model, signal, experimental: {} });
    widget.render({ model, el: host, signal, experimental: {} });
  } catch (err) {
    host.textContent = `The ${what} could not start in this browser: ${String(err)}`;
    throw err;
  }
}
