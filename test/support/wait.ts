/** Resolves after `ms` milliseconds; for tests whose subject is time passing (a TTL, a delay), never to wait for work. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves once `condition` holds, checking every `everyMs`; fails the test past `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000, everyMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}
