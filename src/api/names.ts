import { invalidArgument } from "./errors.ts";

const MAX_NAME_LENGTH = 200;

/** A display name: trimmed, 1..MAX_NAME_LENGTH characters (code points), else InvalidArgument naming `field`. */
export function requireName(field: string, raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length === 0) throw invalidArgument(field, `${field} must not be empty`);
  if (length > MAX_NAME_LENGTH) throw invalidArgument(field, `${field} must be at most ${MAX_NAME_LENGTH} characters`);
  return name;
}
