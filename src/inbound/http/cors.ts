import type { Client } from "@connectrpc/connect";
import type { FastifyCorsOptions, FastifyCorsOptionsDelegateCallback } from "@fastify/cors";
import type { FastifyRequest } from "fastify";
import { LRUCache } from "lru-cache";
import type { TriggerService } from "../../../gen/docpipe/v1/trigger_service_pb.js";
import { isUuid } from "../../platform/ids.ts";
import { ReadThroughCache } from "../../platform/cache/read-through-cache.ts";

/** Whether a browser at `origin` may submit to a trigger whose allowed origins are `allowed`. */
export function isOriginAllowed(allowed: readonly string[], origin: string): boolean {
  return allowed.includes("*") || allowed.includes(origin.toLowerCase());
}

/** Headers a browser may send to the trigger, and the ones its script may read back. */
export const CORS_ALLOWED_HEADERS = ["X-Api-Key", "X-Workspace-Id", "Idempotency-Key", "Content-Type"];
export const CORS_EXPOSED_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "Idempotent-Replayed", "X-Request-Id"];

const TRIGGER_PATH = /^\/pipes\/([^/?#]+)\/(?:http-)?trigger\/?(?:[?#]|$)/;

/**
 * Why an OPTIONS on a trigger path got no CORS answer (the plugin then answers as for no route):
 * the 404's detail, which tells no more than the refusal itself (not which reason, nor whether the
 * pipe exists).
 * Undefined for any other request.
 */
export function refusedPreflightDetail(request: FastifyRequest): string | undefined {
  if (request.method !== "OPTIONS" || !TRIGGER_PATH.test(request.url)) return undefined;
  const origin = request.headers.origin;
  if (origin === undefined) return "OPTIONS here answers CORS preflights only, and this request has no Origin header";
  return (
    `no cross-origin submissions from ${origin.slice(0, 200)} here: the pipe is not found or not active, its HTTP trigger `
    + `does not allow this origin, or this address asked about too many pipes this minute`
  );
}

/** How long a pipe's origin list is reused: a change of allowed origins reaches browsers within this. */
export const ORIGIN_CACHE_TTL_MS = 5_000;
/** Pipes whose origin lists are cached at most. */
const ORIGIN_CACHE_MAX_PIPES = 10_000;
/** Lookups of pipes not in the cache that one client address may cause per minute. */
export const PREFLIGHT_LOOKUPS_PER_MINUTE = 30;
/** Client addresses whose preflight lookups are counted at most (the least recent are forgotten). */
const PREFLIGHT_CLIENTS_MAX = 10_000;

/**
 * Whether `client` may cause one more origin lookup this minute; counts it when so. A browser needs
 * one lookup per pipe and five seconds; a script inventing pipe ids (each a database query) runs out.
 */
function preflightBudget(): (client: string) => boolean {
  const spent = new LRUCache<string, { lookups: number }>({ max: PREFLIGHT_CLIENTS_MAX, ttl: 60_000 });
  return (client) => {
    const entry = spent.get(client);
    if (entry === undefined) {
      spent.set(client, { lookups: 1 });
      return true;
    }
    if (entry.lookups >= PREFLIGHT_LOOKUPS_PER_MINUTE) return false;
    entry.lookups++;
    return true;
  };
}

/** No CORS headers: not a browser's request, or from an origin the pipe does not allow. */
const NO_CORS: FastifyCorsOptions = Object.freeze({ origin: false });

/**
 * The CORS headers of a refusal answered before the CORS hook ran (its onRequest hooks threw), by
 * the same `delegate`: a browser at an allowed origin can then read a 429's Retry-After and
 * RateLimit-* headers. None for a refusal before the key was checked (401), as for a preflight that
 * the pipe's origins do not allow.
 */
export async function refusalCorsHeaders(delegate: FastifyCorsOptionsDelegateCallback, request: FastifyRequest): Promise<Record<string, string> | undefined> {
  if (request.apiKey === undefined || request.pipeTrigger !== undefined || request.headers.origin === undefined) return undefined;
  const options = await corsOptionsOf(delegate, request);
  if (typeof options.origin !== "string") return undefined;
  return { "access-control-allow-origin": options.origin, "access-control-expose-headers": CORS_EXPOSED_HEADERS.join(", ") };
}

/** What `delegate` answers for `request`, as a promise. */
export function corsOptionsOf(delegate: FastifyCorsOptionsDelegateCallback, request: FastifyRequest): Promise<FastifyCorsOptions> {
  return new Promise((resolve, reject) => delegate(request, (error, options) => (error === null ? resolve(options ?? NO_CORS) : reject(error))));
}

/** The CORS headers for `origin` at a trigger whose allowed origins are `allowed`. */
function corsOptionsFor(origin: string, allowed: readonly string[]): FastifyCorsOptions {
  if (!isOriginAllowed(allowed, origin)) return NO_CORS;
  return {
    origin,
    methods: ["POST"],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    // An OPTIONS without Access-Control-Request-Method is answered like a preflight, not with the plugin's plain-text 400.
    strictPreflight: false,
  };
}

/**
 * @fastify/cors options, resolved per request; the plugin runs them as a preHandler hook. A
 * callback rather than a promise: most requests are answered at once (no Origin, or a POST whose
 * trigger is resolved), and the plugin's promise path cost each of them three promises.
 * - A POST has passed the key, pipe and origin checks by then: its headers come from the trigger
 *   resolved for it, and nothing is looked up before the key is checked.
 * - A preflight carries no key, so the pipe's origins are looked up by pipe id alone (revealing
 *   nothing but whether this origin may call) and cached briefly; an unknown or inactive pipe, or a
 *   failed lookup, has no allowed origins. Only UUID-shaped ids are looked up and cached (anything
 *   else names no pipe), so the cache's entries stay small and bounded in number. Each client
 *   address (`clientOf`) may cause PREFLIGHT_LOOKUPS_PER_MINUTE lookups of pipes not in the cache;
 *   past that its preflights for other pipes get no CORS headers (the browser refuses the call)
 *   until the minute ends, so fresh pipe ids cannot turn into a stream of database queries.
 */
export function corsDelegator(trigger: Client<typeof TriggerService>, clientOf: (request: FastifyRequest) => string): FastifyCorsOptionsDelegateCallback {
  // A burst of preflights for one pipe shares one lookup.
  const cache = new ReadThroughCache<readonly string[]>({ max: ORIGIN_CACHE_MAX_PIPES, ttlMs: ORIGIN_CACHE_TTL_MS });
  const mayLookUp = preflightBudget();
  const preflightOrigins = async (rawPipeId: string, client: string): Promise<readonly string[]> => {
    // Only ids that can name a pipe are looked up and kept: junk of any length costs nothing.
    if (!isUuid(rawPipeId)) return [];
    const pipeId = rawPipeId.toLowerCase();
    // Over budget: no lookup, and nothing cached (undefined), so the pipe is looked up once the budget allows.
    const allowedOrigins = await cache.get(pipeId, async () =>
      mayLookUp(client)
        ? trigger.getTriggerOrigins({ pipeId }).then(
            (response) => response.allowedOrigins,
            () => [],
          )
        : undefined,
    );
    return allowedOrigins ?? [];
  };
  return (request, callback) => {
    const origin = request.headers.origin;
    if (origin === undefined) return callback(null, NO_CORS);
    const pipeId = TRIGGER_PATH.exec(request.url)?.[1];
    if (pipeId === undefined) return callback(null, NO_CORS);
    const resolved = request.pipeTrigger?.trigger?.allowedOrigins;
    if (resolved !== undefined) return callback(null, corsOptionsFor(origin, resolved));
    // A POST refused before its pipe was resolved (429 past the key's rate limit, see refusalCorsHeaders) asks as a preflight does.
    if (request.method !== "OPTIONS" && request.apiKey === undefined) return callback(null, NO_CORS);
    // Two handlers of one `then`: a throw from the callback itself (the request's later hooks) must not call it twice.
    preflightOrigins(pipeId, clientOf(request)).then(
      (allowed) => callback(null, corsOptionsFor(origin, allowed)),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  };
}
