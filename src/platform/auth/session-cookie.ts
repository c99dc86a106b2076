/** The cookie that carries a console session's token. */
export const SESSION_COOKIE = "docpipe_session";

/**
 * The header a browser must send with every call made with the session cookie. A page on another
 * site cannot add a custom header without a CORS preflight, which the internal port never approves,
 * so a forged cross-site request arrives without it (beside SameSite=Strict, which keeps the cookie
 * off such requests in the first place).
 */
export const CSRF_HEADER = "x-docpipe-console";

/** The session token in a Cookie header, if any. */
export function sessionTokenOf(cookieHeader: string | null): string | undefined {
  if (cookieHeader === null) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Set-Cookie for a new session: HttpOnly, SameSite=Strict, Secure when served over HTTPS. */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** Set-Cookie that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie("", 0, secure);
}
