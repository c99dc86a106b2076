import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "../logger.ts";
import { createDualProtocolServer } from "./dual-protocol-server.ts";
import { internalTokenInterceptor, loggingInterceptor } from "./interceptors.ts";

export interface InternalServerOptions {
  host: string;
  port: number;
  /** When set, every RPC needs `Authorization: Bearer <token>`. */
  token: string | undefined;
  log: Logger;
}

export interface InternalServer {
  port: number;
  close(timeoutMs: number): Promise<void>;
}

/** Serves the Connect services (Connect, gRPC and gRPC-Web protocols) over HTTP/1.1 and HTTP/2. */
export async function startInternalServer(routes: (router: ConnectRouter) => void, options: InternalServerOptions): Promise<InternalServer> {
  const interceptors = [loggingInterceptor(options.log)];
  if (options.token !== undefined) interceptors.push(internalTokenInterceptor(options.token));
  const server = createDualProtocolServer(connectNodeAdapter({ routes, interceptors }));
  const port = await server.listen(options.port, options.host);
  return { port, close: (timeoutMs) => server.close(timeoutMs) };
}
