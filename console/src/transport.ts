import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";

const TOKEN_KEY = "docpipe.internalToken";

/** The internal token, kept for the browser session (sessionStorage: gone when the tab closes). */
export const internalToken = {
  read: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  save: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
};

const bearer: Interceptor = (next) => (request) => {
  const token = internalToken.read();
  if (token !== null) request.header.set("authorization", `Bearer ${token}`);
  return next(request);
};

/** The Connect services beside the page, on the same origin: the internal port serves both. */
export function consoleTransport(): Transport {
  return createConnectTransport({ baseUrl: location.origin, interceptors: [bearer] });
}
