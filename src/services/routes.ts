import type { ConnectRouter, Interceptor, ServiceImpl } from "@connectrpc/connect";
import { KeyService } from "../../gen/docpipe/v1/key_service_pb.js";
import { PipeService } from "../../gen/docpipe/v1/pipe_service_pb.js";
import { RunService } from "../../gen/docpipe/v1/run_service_pb.js";
import { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { createServiceCaches } from "./caches.ts";
import type { ServiceDeps } from "./deps.ts";
import { databaseOutageInterceptor } from "./interceptors.ts";
import { createKeyService } from "./key-service.ts";
import { createPipeService } from "./pipe-service.ts";
import { createRunService } from "./run-service.ts";
import { createSigningSecretService } from "./signing-secret-service.ts";
import { createTriggerService } from "./trigger-service.ts";
import { createWorkspaceService } from "./workspace-service.ts";

/** One instance of every service implementation; their caches are shared by whoever serves them. */
export interface Services {
  keys: ServiceImpl<typeof KeyService>;
  pipes: ServiceImpl<typeof PipeService>;
  runs: ServiceImpl<typeof RunService>;
  workspaces: ServiceImpl<typeof WorkspaceService>;
  signingSecrets: ServiceImpl<typeof SigningSecretService>;
  trigger: ServiceImpl<typeof TriggerService>;
}

export function createServices(deps: ServiceDeps): Services {
  const caches = createServiceCaches(deps.config);
  return {
    keys: createKeyService(deps, caches),
    pipes: createPipeService(deps, caches),
    runs: createRunService(deps),
    workspaces: createWorkspaceService(deps),
    signingSecrets: createSigningSecretService(deps),
    trigger: createTriggerService(deps, caches),
  };
}

/** Interceptors in front of each group of services (logging, then the group's token check). */
export interface ServiceAccess {
  management: Interceptor[];
  trigger: Interceptor[];
}

/**
 * The services on one router. The process registers the same instances on its internal server and
 * on the edge's in-process transport, so a change made through either is seen by both at once.
 * `access` runs outermost (the internal server's logging and token checks): TriggerService is
 * authorized apart from the management services. connect-es lets per-service options replace
 * router-wide ones, so every interceptor is given here.
 */
export function serviceRoutes(services: Services, access: ServiceAccess = { management: [], trigger: [] }): (router: ConnectRouter) => void {
  const management = { interceptors: [...access.management, databaseOutageInterceptor] };
  const trigger = { interceptors: [...access.trigger, databaseOutageInterceptor] };
  return (router) => {
    router.service(KeyService, services.keys, management);
    router.service(PipeService, services.pipes, management);
    router.service(RunService, services.runs, management);
    router.service(WorkspaceService, services.workspaces, management);
    router.service(SigningSecretService, services.signingSecrets, management);
    router.service(TriggerService, services.trigger, trigger);
  };
}
