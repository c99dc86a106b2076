import { createRouterTransport } from "@connectrpc/connect";
import { pino } from "pino";
import { createServiceClients, type ServiceClients } from "../../src/api/clients.ts";
import { inProcessAccess } from "../../src/inbound/rpc/interceptors.ts";
import type { ServiceDeps } from "../../src/api/deps.ts";
import { createServices, serviceRoutes } from "../../src/api/routes.ts";
import { TEST_OPERATOR_TOKEN } from "./deps.ts";

/** Headers that call as the operator (testDeps configures TEST_OPERATOR_TOKEN as INTERNAL_TOKEN). */
export const OPERATOR_HEADERS = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };

/**
 * Clients of one in-memory set of every service (sharing their caches, as in a process), served as
 * the internal port serves them (every management call shows its caller), calling as the operator.
 */
export function inMemoryClients(deps: ServiceDeps): ServiceClients {
  const routes = serviceRoutes(createServices(deps), { management: [], trigger: [], callers: "credentials" });
  return createServiceClients(
    createRouterTransport(routes, {
      transport: { interceptors: [(next) => (request) => (request.header.set("authorization", OPERATOR_HEADERS.authorization), next(request))] },
    }),
  );
}

/** The routes of every service as this process's own transport serves them to the edge (the process calls as the operator). */
export function inProcessRoutes(deps: ServiceDeps) {
  return serviceRoutes(createServices(deps), inProcessAccess(pino({ level: "silent" })));
}
