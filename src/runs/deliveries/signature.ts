import { createHmac } from "node:crypto";

/** The header that carries a callback's signature. */
export const SIGNATURE_HEADER = "X-DocPipe-Signature";

function hmacHex(secret: string, timestamp: number, rawBody: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex");
}

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 of `${t}.${rawBody}` under each secret, the
 * current one first. During a rotation both secrets sign, so a receiver holding either verifies.
 */
export function signatureHeader(rawBody: string, secrets: readonly string[], timestamp: number): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmacHex(secret, timestamp, rawBody)}`)].join(",");
}
