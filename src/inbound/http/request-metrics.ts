import type { Socket } from "node:net";
import type { FastifyPluginCallback } from "fastify";
import fastifyPlugin from "fastify-plugin";
import type { Metrics } from "../../platform/observability/metrics.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The problem code the request was answered with; "" for a success (decorated in buildApp). */
    problemCode: string;
  }
}

/** Problem codes that mean the API key was refused. */
const AUTHENTICATION_CODES = new Set(["api_key_missing", "api_key_invalid", "api_key_deactivated", "api_key_expired"]);

/** How many of a connection's bytes were already counted, kept on the socket itself. */
const COUNTED = Symbol("bytesCounted");
type CountedSocket = Socket & { [COUNTED]?: number };

/**
 * Counts every answered request once it is sent: by route pattern (never the path, which holds the
 * pipe id), status and problem code; its duration; the bytes read from its connection since the last
 * answer on it; and refusals for the key or its rate limit.
 */
const observeEdgePlugin: FastifyPluginCallback<{ metrics: Metrics }> = (app, { metrics }, pluginDone) => {
  // Each label combination's series, looked up once: prom-client hashes the labels on every call otherwise.
  const requests = new Map<string, ReturnType<Metrics["edgeRequests"]["labels"]>>();
  const durations = new Map<string, ReturnType<Metrics["edgeRequestDuration"]["labels"]>>();
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    const code = request.problemCode;
    const series = `${route} ${reply.statusCode} ${code}`;
    let counter = requests.get(series);
    if (counter === undefined) {
      counter = metrics.edgeRequests.labels(route, String(reply.statusCode), code === "" ? "none" : code);
      requests.set(series, counter);
    }
    counter.inc();
    let histogram = durations.get(route);
    if (histogram === undefined) {
      histogram = metrics.edgeRequestDuration.labels(route);
      durations.set(route, histogram);
    }
    histogram.observe(reply.elapsedTime / 1000);
    const socket = request.raw.socket as CountedSocket | null;
    if (socket) {
      const read = socket.bytesRead;
      metrics.edgeReceivedBytes.inc(read - (socket[COUNTED] ?? 0));
      socket[COUNTED] = read;
    }
    if (code === "rate_limited") metrics.rateLimited.inc();
    else if (AUTHENTICATION_CODES.has(code)) metrics.authenticationFailures.inc({ code });
    done();
  });
  pluginDone();
};

/** Registered on the root instance (not encapsulated), so its hook sees every route. */
export const observeEdge = fastifyPlugin(observeEdgePlugin, { name: "docpipe-edge-metrics" });
