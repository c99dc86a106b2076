import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
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

/**
 * Every Connect service of docpipe, on one router. `interceptors` run outermost (the internal
 * server's logging and token check); connect-es lets per-service options replace router-wide ones,
 * so every interceptor is given here.
 */
export function serviceRoutes(deps: ServiceDeps, interceptors: Interceptor[] = []): (router: ConnectRouter) => void {
  const options = { interceptors: [...interceptors, databaseOutageInterceptor] };
  return (router) => {
    router.service(KeyService, createKeyService(deps), options);
    router.service(PipeService, createPipeService(deps), options);
    router.service(RunService, createRunService(deps), options);
    router.service(WorkspaceService, createWorkspaceService(deps), options);
    router.service(SigningSecretService, createSigningSecretService(deps), options);
  };
}
