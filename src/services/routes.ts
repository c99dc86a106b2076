import type { ConnectRouter, Interceptor, ServiceImpl } from "@connectrpc/connect";
import { KeyService } from "../../gen/docpipe/v1/key_service_pb.js";
import { PipeService } from "../../gen/docpipe/v1/pipe_service_pb.js";
import { RunService } from "../../gen/docpipe/v1/run_service_pb.js";
import { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import type { ServiceDeps } from "./deps.ts";
import { databaseOutageInterceptor } from "./interceptors.ts";
import { createKeyService } from "./key-service.ts";
import { createPipeService } from "./pipe-service.ts";
import { createRunService } from "./run-service.ts";
import { createSigningSecretService } from "./signing-secret-service.ts";
import { createWorkspaceService } from "./workspace-service.ts";

/** One instance of every service implementation; their caches are shared by whoever serves them. */
export interface Services {
  keys: ServiceImpl<typeof KeyService>;
  pipes: ServiceImpl<typeof PipeService>;
  runs: ServiceImpl<typeof RunService>;
  workspaces: ServiceImpl<typeof WorkspaceService>;
  signingSecrets: ServiceImpl<typeof SigningSecretService>;
}

export function createServices(deps: ServiceDeps): Services {
  return {
    keys: createKeyService(deps),
    pipes: createPipeService(deps),
    runs: createRunService(deps),
    workspaces: createWorkspaceService(deps),
    signingSecrets: createSigningSecretService(deps),
  };
}

/**
 * The services on one router. The process registers the same instances on its internal server and
 * on the edge's in-process transport, so a change made through either is seen by both at once.
 * `interceptors` run outermost (the internal server's logging and token check); connect-es lets
 * per-service options replace router-wide ones, so every interceptor is given here.
 */
export function serviceRoutes(services: Services, interceptors: Interceptor[] = []): (router: ConnectRouter) => void {
  const options = { interceptors: [...interceptors, databaseOutageInterceptor] };
  return (router) => {
    router.service(KeyService, services.keys, options);
    router.service(PipeService, services.pipes, options);
    router.service(RunService, services.runs, options);
    router.service(WorkspaceService, services.workspaces, options);
    router.service(SigningSecretService, services.signingSecrets, options);
  };
}
