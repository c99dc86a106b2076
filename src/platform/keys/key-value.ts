import { hash, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

// API key values: `<prefix>_` + 30 random base62 characters + a 6-character base62 CRC32 of them
// (the scheme GitHub and npm use). The checksum lets a mistyped or made-up value be rejected
// without a database query; the randomness is what makes a key unguessable.

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** 30 * log2(62) = 178.6 bits of randomness. */
export const RANDOM_LENGTH = 30;
/** 62^6 > 2^32, so every CRC32 fits in six characters. */
export const CHECKSUM_LENGTH = 6;
/** The largest multiple of 62 that fits in a byte: bytes at or above it are dropped, so no character is favoured. */
const UNBIASED_BYTE_LIMIT = 248;
const KEY_VALUE = new RegExp(`^([a-z][a-z0-9]{0,9})_([0-9A-Za-z]{${RANDOM_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);
/** Longer than any well-formed value (a 10-character prefix); longer input is not even matched. */
const MAX_KEY_VALUE_LENGTH = 10 + 1 + RANDOM_LENGTH + CHECKSUM_LENGTH;

/** Uniformly random base62 characters from the CSPRNG. */
function randomBase62(length: number): string {
  let result = "";
  while (result.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < UNBIASED_BYTE_LIMIT && result.length < length) result += BASE62[byte % 62];
    }
  }
  return result;
}

/** The CRC32 of `random`, in base62, left-padded to CHECKSUM_LENGTH. */
export function checksumOf(random: string): string {
  let value = crc32(random);
  let result = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    result = BASE62[value % 62] + result;
    value = Math.floor(value / 62);
  }
  return result;
}

/** A new key value with the given prefix, such as "dp_…". */
export function generateKeyValue(prefix: string): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${prefix}_${random}${checksumOf(random)}`;
}

/**
 * Whether `value` has the shape of a key value and its checksum matches. Any well-formed prefix is
 * accepted, not only the configured one, so keys made before KEY_PREFIX changed keep working.
 */
export function isWellFormedKeyValue(value: string): boolean {
  if (value.length > MAX_KEY_VALUE_LENGTH) return false;
  const match = KEY_VALUE.exec(value);
  return match !== null && checksumOf(match[2]!) === match[3];
}

/** What is stored instead of the key value: the SHA-256 of the whole value. */
export function keyDigest(value: string): Buffer {
  return hash("sha256", value, "buffer");
}

/** keyDigest in base64, as the key cache holds it: one call, no Buffer, for every submission. */
export function keyDigestBase64(value: string): string {
  return hash("sha256", value, "base64");
}

/** What listings show instead of the value: the prefix and its last four characters, such as "dp_…a1b2". */
export function keyHint(value: string): string {
  const prefix = value.slice(0, value.indexOf("_"));
  return `${prefix}_…${value.slice(-4)}`;
}
