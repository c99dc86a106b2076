import { randomBytes } from "node:crypto";

/** A session or invitation token: 32 random bytes, base64url (256 bits); only its SHA-256 is stored. */
export function newSecretToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The shape of newSecretToken's values; anything else is refused without a query. */
export function isSecretToken(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}
