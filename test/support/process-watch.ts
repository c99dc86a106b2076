import { monitorEventLoopDelay } from "node:perf_hooks";

export interface ProcessWatch {
  /** The longest the event loop was blocked since the watch started (ms): what a /healthz request would have waited. */
  maxDelayMs(): number;
  /** How far this process's resident memory rose above where it was at the start (MB). */
  rssGrowthMb(): number;
  stop(): void;
}

/** Watches this process's event loop and resident memory (sampled every 10 ms) until stopped. */
export function watchProcess(): ProcessWatch {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  delay.enable();
  return {
    maxDelayMs: () => delay.max / 1e6,
    rssGrowthMb: () => (peak - before) / (1024 * 1024),
    stop() {
      delay.disable();
      clearInterval(sampler);
    },
  };
}
