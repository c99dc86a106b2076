import type { LookupAddress } from "node:dns";
import { Resolver } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");

/**
 * Whether a callback must not connect to `ip`. Only globally routable unicast addresses pass:
 * loopback, private, link-local (with 169.254.169.254), unique-local (with fd00:ec2::254), CGNAT,
 * multicast, unspecified, reserved, and the IPv6 ranges that embed or tunnel IPv4 (IPv4-mapped
 * addresses are judged as the IPv4 address they carry; IPv4-compatible ones are all refused) are all refused. Unparsable is refused.
 */
export function isForbiddenAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return true;
  const address = ipaddr.process(ip);
  // ::/96 holds the deprecated IPv4-compatible addresses (::7f00:1 is 127.0.0.1), which ipaddr.js
  // calls unicast; nothing legitimate lives there, so the whole range is refused.
  if (address.kind() === "ipv6" && address.match(IPV4_COMPATIBLE)) return true;
  return address.range() !== "unicast";
}

/** The host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** How an operator allows private addresses (for a receiver on the same machine or network). */
const PRIVATE_HINT = " (an operator may allow private networks: CALLBACK_ALLOW_PRIVATE_NETWORKS=true)";

/**
 * Why a callback URL is refused before any DNS lookup, or undefined when its shape is acceptable:
 * only http and https; IP-literal hosts and localhost names are judged here. Names that resolve to a
 * forbidden address are refused again at connect time (guardedLookup), which DNS rebinding cannot pass.
 */
export function checkCallbackUrl(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "callback url is not a valid URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `callback url must use http or https, not ${parsed.protocol}`;
  if (allowPrivate) return undefined;
  const host = bareHost(parsed).toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return `callback url host ${host} is a loopback name${PRIVATE_HINT}`;
  if (isIP(host) !== 0 && isForbiddenAddress(host)) return `callback url host ${host} is not a public address${PRIVATE_HINT}`;
  return undefined;
}

/** Refusal of a connection to a forbidden address; not worth retrying. */
export class ForbiddenAddressError extends Error {
  override name = "ForbiddenAddressError";
}

/** How long one DNS query may take (c-ares retries once after it): a silent server fails the attempt in seconds. */
const DNS_TIMEOUT_MS = 2_000;
const DNS_TRIES = 2;

/** Answers that mean "no such records": the other family may still have some. */
const NO_RECORDS = new Set(["ENODATA", "ENOTFOUND"]);

export interface GuardedLookupOptions {
  /** DNS servers to ask ("host:port"); the system's (/etc/resolv.conf) when absent. */
  servers?: string[];
  timeoutMs?: number;
  tries?: number;
}

/**
 * A `lookup` for http(s).request that resolves the name, then refuses when any resolved address is
 * forbidden. The socket connects only to the addresses checked here, so a name that resolves to a
 * public address for a pre-check and to 127.0.0.1 a moment later still cannot reach loopback.
 *
 * Names are resolved over DNS by c-ares (dns's Resolver), never by getaddrinfo (dns.lookup): that one
 * runs on libuv's four-thread pool, which file work shares, and cannot be timed out or cancelled,
 * so a tenant's DNS server that never answers could hold the pool. Each query here has a timeout
 * and uses no thread. /etc/hosts is not read, which callbacks to public receivers never need. The
 * refusal names the host, never the private address it resolved to (that is the operator's network).
 */
export function createGuardedLookup(options: GuardedLookupOptions = {}): LookupFunction {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? DNS_TIMEOUT_MS, tries: options.tries ?? DNS_TRIES });
  if (options.servers !== undefined) resolver.setServers(options.servers);
  const resolveFamily = (hostname: string, family: 4 | 6): Promise<LookupAddress[]> =>
    (family === 4 ? resolver.resolve4(hostname) : resolver.resolve6(hostname)).then((addresses) => addresses.map((address) => ({ address, family })));

  const resolveAll = async (hostname: string, family: number): Promise<LookupAddress[]> => {
    const literal = isIP(hostname);
    if (literal !== 0) return [{ address: hostname, family: literal }];
    const families: (4 | 6)[] = family === 4 || family === 6 ? [family] : [4, 6];
    const settled = await Promise.allSettled(families.map((each) => resolveFamily(hostname, each)));
    const addresses = settled.flatMap((result) => (result.status === "fulfilled" ? result.value : []));
    if (addresses.length > 0) return addresses;
    // Nothing found: the most telling failure (a timeout or refusal before "no such records").
    const failures = settled.flatMap((result) => (result.status === "rejected" ? [result.reason as NodeJS.ErrnoException] : []));
    throw failures.find((error) => !NO_RECORDS.has(error.code ?? "")) ?? failures[0] ?? new Error(`${hostname} did not resolve`);
  };

  return (hostname, lookupOptions, callback) => {
    resolveAll(hostname, lookupOptions.family as number).then(
      (addresses) => {
        if (addresses.some((entry) => isForbiddenAddress(entry.address))) {
          return callback(new ForbiddenAddressError(`${hostname} resolves to an address callbacks may not reach (private, loopback or reserved)`), "", 0);
        }
        if (lookupOptions.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}

/** The lookup callbacks use: the system's DNS servers, with a timeout. */
export const guardedLookup: LookupFunction = createGuardedLookup();
