import { type ConnectRouter, createContextValues } from "@connectrpc/connect";
import { type ConnectNodeAdapterOptions, connectNodeAdapter } from "@connectrpc/connect-node";
import { peerAddressKey } from "../../platform/auth/caller.ts";
import { type MetricsEndpointOptions, withMetricsEndpoint } from "../../platform/observability/metrics-endpoint.ts";
import { createDualProtocolServer } from "./dual-protocol-server.ts";
import { withHostAllowList } from "../../platform/auth/host-allow-list.ts";

/** The largest request message the internal services read (a pipeline of 50 nodes is a few KB). */
export const INTERNAL_READ_MAX_BYTES = 1024 * 1024;

export interface InternalServer {
  port: number;
  close(timeoutMs: number): Promise<void>;
}

export interface InternalServerOptions {
  host: string;
  port: number;
  /** Host names answered (see withHostAllowList). */
  allowedHosts: readonly string[];
  /** Where requests that are no RPC go (the console); 404 without one. */
  fallback?: ConnectNodeAdapterOptions["fallback"];
  /** GET /metrics beside the services (behind the same Host allow-list). */
  metrics?: MetricsEndpointOptions | undefined;
}

/**
 * Serves the Connect services (Connect, gRPC and gRPC-Web protocols) over HTTP/1.1 and HTTP/2.
 * Give it routes built with the internal access interceptors (internalAccess). Requests that are no
 * RPC go to `fallback` (the console, see consoleHandler); without one they get 404. The Host check
 * comes before both.
 */
export async function startInternalServer(routes: (router: ConnectRouter) => void, options: InternalServerOptions): Promise<InternalServer> {
  const { host, port, allowedHosts, fallback } = options;
  const services = connectNodeAdapter({
    routes,
    readMaxBytes: INTERNAL_READ_MAX_BYTES,
    // A field or enum name the contract does not have is refused, not dropped (Connect's default):
    // a typo in a pipeline ("rulingLine", "ocr": "never") would otherwise save a different pipeline.
    jsonOptions: { ignoreUnknownFields: false },
    // The peer's address, for sign-in limits and the audit log.
    contextValues: (request) => createContextValues().set(peerAddressKey, request.socket.remoteAddress ?? ""),
    ...(fallback === undefined ? {} : { fallback }),
  });
  const handler = options.metrics === undefined ? services : withMetricsEndpoint(options.metrics, services);
  const server = createDualProtocolServer(withHostAllowList(allowedHosts, handler));
  const boundPort = await server.listen(port, host);
  return { port: boundPort, close: (timeoutMs) => server.close(timeoutMs) };
}
