import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createDualProtocolServer } from "./dual-protocol-server.ts";

export interface InternalServer {
  port: number;
  close(timeoutMs: number): Promise<void>;
}

/**
 * Serves the Connect services (Connect, gRPC and gRPC-Web protocols) over HTTP/1.1 and HTTP/2.
 * Give it routes built with the internal interceptors (internalInterceptors).
 */
export async function startInternalServer(routes: (router: ConnectRouter) => void, host: string, port: number): Promise<InternalServer> {
  const server = createDualProtocolServer(connectNodeAdapter({ routes }));
  const boundPort = await server.listen(port, host);
  return { port: boundPort, close: (timeoutMs) => server.close(timeoutMs) };
}
