import http from "node:http";
import type http2 from "node:http2";
import type { Registry } from "prom-client";
import { bearerTokenCheck } from "../auth/bearer-token.ts";
import { withHostAllowList } from "../auth/host-allow-list.ts";
import { notReadyDetail } from "./readiness.ts";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
type Handler = (request: Request, response: Response) => void;

export interface MetricsEndpointOptions {
  registry: Registry;
  /** When set, a scrape needs `Authorization: Bearer <token>` (INTERNAL_TOKEN). */
  token: string | undefined;
}

function answer(response: Response, status: number, contentType: string, body: string): void {
  (response as http.ServerResponse).writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** The path of a request, without its query. */
function pathOf(request: Request): string {
  const url = request.url ?? "";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Answers GET /metrics in the Prometheus text format and hands every other request to `next`. With
 * a token, a scrape without it gets 401, compared in constant time.
 */
export function withMetricsEndpoint(options: MetricsEndpointOptions, next: Handler): Handler {
  const matches = options.token === undefined ? undefined : bearerTokenCheck(options.token);
  return (request, response) => {
    if (pathOf(request) !== "/metrics") return next(request, response);
    if (request.method !== "GET" && request.method !== "HEAD") {
      (response as http.ServerResponse).setHeader("allow", "GET, HEAD");
      return answer(response, 405, "text/plain; charset=utf-8", "use GET\n");
    }
    if (matches !== undefined && !matches(request.headers.authorization)) {
      (response as http.ServerResponse).setHeader("www-authenticate", "Bearer");
      return answer(response, 401, "text/plain; charset=utf-8", "missing or invalid token (Authorization: Bearer <INTERNAL_TOKEN>)\n");
    }
    options.registry.metrics().then(
      (text) => answer(response, 200, options.registry.contentType, text),
      (error: unknown) => answer(response, 500, "text/plain; charset=utf-8", `metrics could not be collected: ${(error as Error).message}\n`),
    );
  };
}

export interface MetricsServerOptions extends MetricsEndpointOptions {
  host: string;
  port: number;
  allowedHosts: readonly string[];
  /** Resolves when the process can work (its database answers, its parse pool parses); GET /readyz says so. */
  ready: () => Promise<void>;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * METRICS_PORT: /metrics, /healthz and /readyz for a process that has no internal port (a worker-only
 * or edge-only process), behind the same Host allow-list and token as the internal port.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const health: Handler = (request, response) => {
    const path = pathOf(request);
    if (path === "/healthz") return answer(response, 200, "application/json", '{"status":"ok"}');
    if (path === "/readyz") {
      options.ready().then(
        () => answer(response, 200, "application/json", '{"status":"ready"}'),
        (error: unknown) => answer(response, 503, "application/json", JSON.stringify({ status: "unavailable", detail: notReadyDetail(error) })),
      );
      return;
    }
    answer(response, 404, "text/plain; charset=utf-8", "not found: this port serves /metrics, /healthz and /readyz\n");
  };
  const server = http.createServer(withHostAllowList(options.allowedHosts, withMetricsEndpoint(options, health)) as http.RequestListener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
