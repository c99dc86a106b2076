import { lookup as dnsLookup, type LookupAddress } from "node:dns";
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
  if (host === "localhost" || host.endsWith(".localhost")) return `callback url host ${host} is a loopback name`;
  if (isIP(host) !== 0 && isForbiddenAddress(host)) return `callback url host ${host} is not a public address`;
  return undefined;
}

/** Refusal of a connection to a forbidden address; not worth retrying. */
export class ForbiddenAddressError extends Error {
  override name = "ForbiddenAddressError";
}

/**
 * A `lookup` for http(s).request that resolves as usual, then refuses when any resolved address is
 * forbidden. The socket connects only to the addresses checked here, so a name that resolves to a
 * public address for a pre-check and to 127.0.0.1 a moment later still cannot reach loopback.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 0);
    const forbidden = addresses.find((entry) => isForbiddenAddress(entry.address));
    if (forbidden !== undefined) {
      return callback(new ForbiddenAddressError(`${hostname} resolves to ${forbidden.address}, which callbacks may not reach`), "", 0);
    }
    if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0];
    if (first === undefined) return callback(new Error(`${hostname} did not resolve`), "", 0);
    callback(null, first.address, first.family);
  });
};
