import { createRouterTransport } from "@connectrpc/connect";
import { createServiceClients, type ServiceClients } from "../../src/clients.ts";
import type { ServiceDeps } from "../../src/services/deps.ts";
import { createServices, serviceRoutes } from "../../src/services/routes.ts";

/** Clients of one in-memory set of every service (sharing their caches, as in a process). */
export function inMemoryClients(deps: ServiceDeps): ServiceClients {
  return createServiceClients(createRouterTransport(serviceRoutes(createServices(deps))));
}
