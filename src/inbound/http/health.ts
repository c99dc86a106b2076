import type { FastifyPluginAsync } from "fastify";
import { notReadyDetail } from "../../platform/observability/readiness.ts";
import { Problem } from "./problems.ts";

const STATUS_SCHEMA = { response: { 200: { type: "object", properties: { status: { type: "string" } } } } };

/**
 * `/healthz` answers while the process serves at all (liveness); `/readyz` only while `ready`
 * resolves, that is while the database answers and, in a process with workers, the parse pool has
 * parsed its sample (readiness); the problem's detail says which failed.
 */
export const healthRoutes: FastifyPluginAsync<{ ready: () => Promise<void> }> = async (app, { ready }) => {
  app.get("/healthz", { schema: STATUS_SCHEMA }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: STATUS_SCHEMA }, async () => {
    try {
      await ready();
    } catch (error) {
      throw new Problem("service_unavailable", notReadyDetail(error), {}, {}, error);
    }
    return { status: "ready" };
  });
};
