import type { Config } from "../platform/config.ts";
import type { KeyCredentials } from "../data/repositories/keys.ts";
import type { ResolvedTrigger } from "../data/repositories/pipes.ts";
import type { SessionCaller } from "../data/repositories/sessions.ts";
import { ReadThroughCache } from "../platform/cache/read-through-cache.ts";

/**
 * How long ResolveTrigger reuses a resolved trigger. Changes made through this process clear it at
 * once; other processes see new settings within this time. Pausing and deleting stay exact
 * everywhere: CreateRun admits a run only for a pipe that is active when it inserts it.
 */
const TRIGGER_CACHE_TTL_MS = 1000;

/** How long an unknown key digest is answered from memory instead of the database. */
const KEY_MISS_CACHE_MS = 60_000;

/**
 * What TriggerService reads on every submission, shared with the management services that change
 * it: a change made through this process clears the cache at once.
 */
export interface ServiceCaches {
  /**
   * A key's stored credentials, reused for KEY_CACHE_MS (default 1 s); expiry is checked on every
   * call, so it stays exact. Unknown digests are remembered for KEY_MISS_CACHE_MS: a key value cannot
   * be presented before it exists (it is random), so a remembered miss never hides a new key, and a
   * flood of minted, well-formed keys costs one query per distinct value.
   */
  credentials: ReadThroughCache<KeyCredentials>;
  /** Resolved triggers; only those with a live pipe are kept, so a pipe activated a moment ago is found at once. */
  triggers: ReadThroughCache<ResolvedTrigger>;
  /**
   * A live session with its person's roles, by its digest, reused for KEY_CACHE_MS; its expiries are
   * checked on every call. Signing out, a changed role, a removed member and an accepted invitation
   * clear it in this process at once; other processes see them within KEY_CACHE_MS.
   */
  sessions: ReadThroughCache<SessionCaller>;
}

export function createServiceCaches(config: Pick<Config, "keyCacheMs">): ServiceCaches {
  return {
    credentials: new ReadThroughCache({ max: 10_000, ttlMs: config.keyCacheMs, missTtlMs: KEY_MISS_CACHE_MS }),
    triggers: new ReadThroughCache({ max: 10_000, ttlMs: TRIGGER_CACHE_TTL_MS, keepIf: (resolved) => resolved.pipe !== undefined }),
    sessions: new ReadThroughCache({ max: 10_000, ttlMs: config.keyCacheMs }),
  };
}
