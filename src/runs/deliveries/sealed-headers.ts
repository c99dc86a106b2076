import type { SecretBox } from "./secret-box.ts";

/** Marks a stored header value as sealed; values without it were stored before sealing began. */
export const SEALED_PREFIX = "dpsealed:";

/**
 * Callback headers (and HTTP request nodes' headers) often carry the receiver's credentials
 * (Authorization, API keys), so their values are stored sealed by the same SecretBox as signing
 * secrets, bound to the organization. Names stay readable.
 */
export function sealHeaderValue(value: string, box: SecretBox, organizationId: string): string {
  return SEALED_PREFIX + box.seal(value, organizationId).toString("base64url");
}

/** A stored header value, opened (a value stored before sealing passes as it is). */
export function openHeaderValue(value: string, box: SecretBox, organizationId: string): string {
  return value.startsWith(SEALED_PREFIX) ? box.open(Buffer.from(value.slice(SEALED_PREFIX.length), "base64url"), organizationId) : value;
}

/** One callback or HTTP request node's headers, opened. */
export function openHeaders(headers: Readonly<Record<string, string>>, box: SecretBox, organizationId: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, openHeaderValue(value, box, organizationId)]));
}
