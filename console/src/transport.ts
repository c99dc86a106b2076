import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";

const TOKEN_KEY = "docpipe.internalToken";

/** The operator's INTERNAL_TOKEN, when signed in with it, kept for the browser session (sessionStorage: gone when the tab closes). */
export const internalToken = {
  read: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  save: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  forget: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/**
 * Every call carries the console's CSRF header (calls made with the session cookie without it are
 * refused: a page on another site cannot add it), and the operator token when one was given.
 */
const credentials: Interceptor = (next) => (request) => {
  for (const [name, value] of Object.entries(consoleHeaders())) request.header.set(name, value);
  return next(request);
};

/** The console's credentials as headers, for its calls to routes beside the services (documents, test runs). */
export function consoleHeaders(): Record<string, string> {
  const token = internalToken.read();
  return { "x-docpipe-console": "1", ...(token === null ? {} : { authorization: `Bearer ${token}` }) };
}

/** The Connect services beside the page, on the same origin: the internal port serves both. */
export function consoleTransport(): Transport {
  return createConnectTransport({ baseUrl: location.origin, interceptors: [credentials] });
}
