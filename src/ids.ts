import { v7 } from "uuid";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A new id: a UUIDv7, so ids sort in creation order and lists can page by id. */
export function newId(): string {
  return v7();
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
