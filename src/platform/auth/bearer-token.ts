import { createHash, timingSafeEqual } from "node:crypto";

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/**
 * A check of an Authorization header against `Bearer <token>`, in constant time: both sides are
 * hashed first, so neither their contents nor their lengths change how long the comparison takes.
 */
export function bearerTokenCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(`Bearer ${token}`);
  return (authorization) => timingSafeEqual(digest(authorization ?? ""), expected);
}
