/**
 * What `work` settles to, and the longest the event loop went without running a 5 ms timer meanwhile:
 * how long the work held it at a stretch.
 */
export async function longestStall<T>(work: () => Promise<T>): Promise<{ outcome: PromiseSettledResult<T>; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 5);
  try {
    const [outcome] = await Promise.allSettled([work()]);
    stallMs = Math.max(stallMs, performance.now() - last);
    return { outcome: outcome!, stallMs };
  } finally {
    clearInterval(timer);
  }
}
