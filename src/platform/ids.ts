import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Random bytes for ids, drawn 16 at a time from a pool refilled by one call for 256 ids. */
const randomPool = Buffer.alloc(16 * 256);
let poolOffset = randomPool.length;
/** The last id's time and counter: ids of one millisecond count up from a random start, as uuid's own v7() does. */
const last = { msecs: -Infinity, seq: 0 };

/**
 * A new id: a UUIDv7, so ids sort in creation order and lists can page by id. uuid's v7() asks the
 * system for 16 random bytes per id (a call into OpenSSL, and a getpid each), two per submission;
 * these come from a pool, and the order within a millisecond is kept here as uuid keeps it.
 */
export function newId(): string {
  if (poolOffset === randomPool.length) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  const random = randomPool.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    last.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs++;
  }
  return v7({ random, msecs: last.msecs, seq: last.seq });
}

/** Whether `value` is UUID-shaped; ids that are not cannot name anything and are NotFound. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Whether `value` is a SHA-256 in lowercase hex: how a stored document is named. */
export function isSha256Hex(value: string): boolean {
  return SHA256_HEX.test(value);
}
