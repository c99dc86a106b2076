/**
 * What a callback's receiver runs, written apart from the signer in src/runs/deliveries/signature.ts so
 * the tests check one against the other.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

function hmacHex(secret: string, timestamp: number, rawBody: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex");
}

/**
 * Whether `header` carries a v1 signature of `rawBody` (the bytes as received,
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
