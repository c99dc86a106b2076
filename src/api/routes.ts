import type { ConnectRouter, Interceptor, ServiceImpl } from "@connectrpc/connect";
import { AccountService } from "../../gen/docpipe/v1/account_service_pb.js";
import { AuditService } from "../../gen/docpipe/v1/audit_service_pb.js";
import { MemberService } from "../../gen/docpipe/v1/member_service_pb.js";
import { ServiceTokenService } from "../../gen/docpipe/v1/service_token_service_pb.js";
import { KeyService } from "../../gen/docpipe/v1/key_service_pb.js";
import { PipeService } from "../../gen/docpipe/v1/pipe_service_pb.js";
import { RunService } from "../../gen/docpipe/v1/run_service_pb.js";
import { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { createAccountService, createSessions } from "./account-service.ts";
import { createAuditService } from "./audit-service.ts";
import { createServiceCaches } from "./caches.ts";
import { accessInterceptor, type Authenticator, createAuthenticator } from "./callers.ts";
import type { ServiceDeps } from "./deps.ts";
import { databaseOutageInterceptor } from "./interceptors.ts";
import { createKeyService } from "./key-service.ts";
import { createMemberService } from "./member-service.ts";
import { createPipeService } from "./pipe-service.ts";
import { createRunDocuments, type FindRunDocument } from "./run-documents.ts";
import { AnonymousGate } from "./anonymous-gate.ts";
import { QueuedRunsCap } from "./queued-runs-cap.ts";
import { createRunService } from "./run-service.ts";
import { createTestRuns, type TestRuns } from "./test-runs.ts";
import { createServiceTokenService } from "./service-token-service.ts";
import { createSigningSecretService } from "./signing-secret-service.ts";
import { createSingleSignOn, type SingleSignOn } from "./single-sign-on.ts";
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
  accounts: ServiceImpl<typeof AccountService>;
  members: ServiceImpl<typeof MemberService>;
  serviceTokens: ServiceImpl<typeof ServiceTokenService>;
  audit: ServiceImpl<typeof AuditService>;
  /** What the management services put in front of every RPC: who calls, what they may do, the audit log. */
  access: (callers: ServiceAccess["callers"]) => Interceptor;
  /** Sign-in with an OpenID provider, when OIDC_ISSUER is set (the internal port's /auth/oidc/ routes). */
  singleSignOn: SingleSignOn | undefined;
  /** A run's stored document, for the console's document route, under the same access rules. */
  runDocuments: FindRunDocument;
  /** Documents the console sends to a pipe in test mode, under the same access rules. */
  testRuns: TestRuns;
}

export function createServices(deps: ServiceDeps): Services {
  const caches = createServiceCaches(deps.config);
  const sessions = createSessions(deps);
  const authenticate = createAuthenticator(deps, caches);
  const queuedRunsCap = new QueuedRunsCap(deps.db, deps.config.maxQueuedRunsPerOrganization);
  const anonymous = new AnonymousGate(deps.config.signInConcurrency, deps.config.signInQueue);
  return {
    keys: createKeyService(deps, caches),
    pipes: createPipeService(deps, caches),
    runs: createRunService(deps, queuedRunsCap),
    workspaces: createWorkspaceService(deps),
    signingSecrets: createSigningSecretService(deps),
    trigger: createTriggerService(deps, caches, queuedRunsCap),
    accounts: createAccountService(deps, sessions, caches, anonymous),
    members: createMemberService(deps, caches),
    serviceTokens: createServiceTokenService(deps),
    audit: createAuditService(deps),
    access: authenticatedAccess(deps, authenticate),
    singleSignOn: deps.config.oidc === undefined ? undefined : createSingleSignOn(deps, deps.config.oidc, sessions, anonymous),
    runDocuments: createRunDocuments(deps, authenticate),
    testRuns: createTestRuns(deps, authenticate, queuedRunsCap),
  };
}

function authenticatedAccess(deps: ServiceDeps, authenticate: Authenticator): Services["access"] {
  const fromCredentials = accessInterceptor(deps, { kind: "credentials", authenticate });
  const fromProcess = accessInterceptor(deps, { kind: "process" });
  return (callers) => (callers === "credentials" ? fromCredentials : fromProcess);
}

/** Interceptors in front of each group of services (logging, then the group's token check), and who the management callers are. */
export interface ServiceAccess {
  management: Interceptor[];
  trigger: Interceptor[];
  /**
   * `credentials`: each management call must show who makes it (a session cookie, a service token,
   * INTERNAL_TOKEN) and may do only what the permission table lets that caller do; any interface
   * serving these routes uses it. `process`: the calls come from this process itself (in-process
   * transport), acting as the operator.
   */
  callers: "credentials" | "process";
}

/**
 * The services on one router. The process registers the same instances on its internal server and
 * on the edge's in-process transport, so a change made through either is seen by both at once.
 * `access` runs outermost (the internal server's logging and token checks): TriggerService is
 * authorized apart from the management services, whose callers the permission table checks. connect-es lets per-service options replace
 * router-wide ones, so every interceptor is given here.
 */
export function serviceRoutes(services: Services, access: ServiceAccess): (router: ConnectRouter) => void {
  const management = { interceptors: [...access.management, databaseOutageInterceptor, services.access(access.callers)] };
  const trigger = { interceptors: [...access.trigger, databaseOutageInterceptor] };
  return (router) => {
    router.service(KeyService, services.keys, management);
    router.service(PipeService, services.pipes, management);
    router.service(RunService, services.runs, management);
    router.service(WorkspaceService, services.workspaces, management);
    router.service(SigningSecretService, services.signingSecrets, management);
    router.service(AccountService, services.accounts, management);
    router.service(MemberService, services.members, management);
    router.service(ServiceTokenService, services.serviceTokens, management);
    router.service(AuditService, services.audit, management);
    router.service(TriggerService, services.trigger, trigger);
  };
}
