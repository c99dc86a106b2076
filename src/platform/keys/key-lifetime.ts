/** last_used_time is written at most once per this interval per key, never on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** A key past its expiration time; the instant itself counts as past. */
export function isExpired(expireTime: Date | null, now: Date): boolean {
  return expireTime !== null && expireTime.getTime() <= now.getTime();
}

/** Whether a use at `now` should be recorded, given the last one recorded. */
export function isKeyUseDue(lastUsedTime: Date | null, now: Date): boolean {
  return lastUsedTime === null || now.getTime() - lastUsedTime.getTime() >= LAST_USED_RESOLUTION_MS;
}
