import { createHmac, timingSafeEqual } from "node:crypto";

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

/**
 * What a receiver runs: whether `header` carries a v1 signature of `rawBody` (the bytes as received,
 * before any JSON parsing) under `secret`, made within `toleranceSeconds` of `nowSeconds` (refuses replays).
 */
export function verifySignature(header: string, rawBody: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000), toleranceSeconds = 300): boolean {
  const entries = header.split(",").map((part) => part.trim().split("="));
  const timestamp = Number(entries.find(([name]) => name === "t")?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, rawBody), "hex");
  return entries.some(([name, value = ""]) => {
    if (name !== "v1") return false;
    const given = Buffer.from(value, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
