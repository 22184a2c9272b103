/** A macrotask turn: resolves after the tasks already queued (a message posted meanwhile, the
 * page's other work), without a timer's clamping. Used on the page and in the layout worker. */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
