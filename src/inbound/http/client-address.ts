import { isIP } from "node:net";
import type { FastifyRequest } from "fastify";
import type { Config } from "../../platform/config.ts";

/**
 * The address a request's failed authentications are counted against. `request.ip` applies
 * TRUST_PROXY (proxy-addr), then two rules keep a client from choosing its own address:
 * - with a hop count, a chain of fewer X-Forwarded-For entries than proxies did not pass through
 *   them all, so its entries are the client's own words: the connection's address counts;
 * - an entry that is not an IP address (anything a client can write) never counts: the connection's
 *   address does, so invented values cannot each open a counter of their own.
 */
export function clientAddress(request: FastifyRequest, trustProxy: Config["trustProxy"]): string {
  const peer = request.socket.remoteAddress ?? "";
  if (trustProxy === false) return peer;
  // request.ips is [peer, each believed hop from the right]; with N proxies it holds N + 1 entries.
  if (typeof trustProxy === "number" && (request.ips?.length ?? 1) <= trustProxy) return peer;
  return isIP(request.ip) === 0 ? peer : request.ip;
}
