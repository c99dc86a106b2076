import { hash, verify } from "@node-rs/argon2";

/** argon2id (the enum is a const enum, which plain Node cannot import); RFC 9106's second recommended option. */
const ARGON2ID = 2;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

/** The PHC string stored for a password. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** A hash of no one's password: checked when the email is unknown, so a sign-in takes as long either way. */
const NOBODY = hashPassword("no account has this password");

/** Whether `password` matches the stored hash; with no hash, spends the same time and says no. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    await verify(await NOBODY, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
