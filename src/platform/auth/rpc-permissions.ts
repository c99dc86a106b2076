import type { Permission } from "./roles.ts";

/**
 * What an RPC needs of its caller:
 * - `organization`: a role in the organization the request names (its `organization_id`) that
 *   grants `permission`. A caller with no role there gets NotFound `<resource>_not_found`, exactly
 *   what a missing resource gets; a role without the permission gets PermissionDenied.
 *   `idField` names the request field holding the resource's id, for the audit log.
 * - `operator`: INTERNAL_TOKEN (or the process itself) only.
 * - `authenticated`: any known caller; the service narrows what it answers (ListOrganizations).
 * - `signed_in`: a person's session.
 * - `anyone`: no credential needed (signing in, accepting an invitation).
 * - `edge`: TriggerService, guarded by TRIGGER_TOKEN apart from everything else.
 */
export type RpcRule =
  | { scope: "organization"; permission: Permission; resource: string; idField: string | undefined }
  | { scope: "operator" | "authenticated" | "signed_in" | "anyone" | "edge" };

function org(permission: Permission, resource: string, idField?: string): RpcRule {
  return { scope: "organization", permission, resource, idField };
}

const OPERATOR: RpcRule = { scope: "operator" };
const AUTHENTICATED: RpcRule = { scope: "authenticated" };
const SIGNED_IN: RpcRule = { scope: "signed_in" };
const ANYONE: RpcRule = { scope: "anyone" };
const EDGE: RpcRule = { scope: "edge" };

/**
 * Every RPC of every service, by procedure name. An RPC missing here is refused at run time
 * (PermissionDenied rpc_not_authorized) and fails the table-driven test over the generated
 * descriptors, so a new RPC cannot ship unguarded.
 */
export const RPC_RULES: Readonly<Record<string, RpcRule>> = {
  "docpipe.v1.KeyService/CreateKey": org("keys.write", "organization"),
  "docpipe.v1.KeyService/GetKey": org("keys.read", "api_key", "keyId"),
  "docpipe.v1.KeyService/ListKeys": org("keys.read", "organization"),
  "docpipe.v1.KeyService/DeactivateKey": org("keys.write", "api_key", "keyId"),
  "docpipe.v1.KeyService/ReactivateKey": org("keys.write", "api_key", "keyId"),
  "docpipe.v1.KeyService/DeleteKey": org("keys.write", "api_key", "keyId"),

  "docpipe.v1.PipeService/CreatePipe": org("pipes.write", "organization"),
  "docpipe.v1.PipeService/GetPipe": org("pipes.read", "pipe", "pipeId"),
  "docpipe.v1.PipeService/ListPipes": org("pipes.read", "organization"),
  "docpipe.v1.PipeService/UpdatePipe": org("pipes.write", "pipe", "pipeId"),
  "docpipe.v1.PipeService/GetPipelineVersion": org("pipes.read", "pipe", "pipeId"),
  "docpipe.v1.PipeService/ListPipelineVersions": org("pipes.read", "pipe", "pipeId"),
  "docpipe.v1.PipeService/ActivatePipe": org("pipes.write", "pipe", "pipeId"),
  "docpipe.v1.PipeService/PausePipe": org("pipes.write", "pipe", "pipeId"),
  "docpipe.v1.PipeService/DeletePipe": org("pipes.write", "pipe", "pipeId"),

  "docpipe.v1.RunService/GetRun": org("runs.read", "run", "runId"),
  "docpipe.v1.RunService/ListRuns": org("runs.read", "organization"),
  "docpipe.v1.RunService/CancelRun": org("runs.write", "run", "runId"),
  // Added by other work of this round; listed so they are guarded the moment they land.
  "docpipe.v1.RunService/ResolveReview": org("runs.review", "run", "runId"),
  "docpipe.v1.RunService/RerunRun": org("runs.write", "run", "runId"),
  "docpipe.v1.RunService/RedeliverCallback": org("runs.write", "run", "runId"),

  "docpipe.v1.WorkspaceService/CreateOrganization": OPERATOR,
  "docpipe.v1.WorkspaceService/GetOrganization": org("organization.read", "organization"),
  "docpipe.v1.WorkspaceService/ListOrganizations": AUTHENTICATED,
  "docpipe.v1.WorkspaceService/UpdateOrganization": org("organization.update", "organization"),
  "docpipe.v1.WorkspaceService/CreateWorkspace": org("workspaces.write", "organization"),
  "docpipe.v1.WorkspaceService/GetWorkspace": org("workspaces.read", "workspace", "workspaceId"),
  "docpipe.v1.WorkspaceService/ListWorkspaces": org("workspaces.read", "organization"),
  "docpipe.v1.WorkspaceService/UpdateWorkspace": org("workspaces.write", "workspace", "workspaceId"),
  "docpipe.v1.WorkspaceService/DeleteWorkspace": org("workspaces.write", "workspace", "workspaceId"),

  "docpipe.v1.SigningSecretService/RotateSigningSecret": org("signing_secrets.write", "organization"),
  "docpipe.v1.SigningSecretService/ListSigningSecrets": org("signing_secrets.read", "organization"),
  "docpipe.v1.SigningSecretService/ExpirePreviousSigningSecret": org("signing_secrets.write", "organization"),

  "docpipe.v1.AccountService/SignIn": ANYONE,
  "docpipe.v1.AccountService/SignOut": SIGNED_IN,
  "docpipe.v1.AccountService/SignOutEverywhere": SIGNED_IN,
  "docpipe.v1.AccountService/GetCurrentAccount": SIGNED_IN,
  "docpipe.v1.AccountService/AcceptInvitation": ANYONE,

  "docpipe.v1.MemberService/ListMembers": org("members.read", "organization"),
  "docpipe.v1.MemberService/UpdateMemberRole": org("members.write", "member", "accountId"),
  "docpipe.v1.MemberService/RemoveMember": org("members.write", "member", "accountId"),
  "docpipe.v1.MemberService/CreateInvitation": org("members.write", "organization"),
  "docpipe.v1.MemberService/ListInvitations": org("members.read", "organization"),
  "docpipe.v1.MemberService/DeleteInvitation": org("members.write", "invitation", "invitationId"),

  "docpipe.v1.ServiceTokenService/CreateServiceToken": org("service_tokens.write", "organization"),
  "docpipe.v1.ServiceTokenService/ListServiceTokens": org("service_tokens.read", "organization"),
  "docpipe.v1.ServiceTokenService/DeleteServiceToken": org("service_tokens.write", "service_token", "serviceTokenId"),

  "docpipe.v1.AuditService/ListAuditEvents": org("audit.read", "organization"),

  "docpipe.v1.TriggerService/AuthenticateKey": EDGE,
  "docpipe.v1.TriggerService/ResolveTrigger": EDGE,
  "docpipe.v1.TriggerService/GetTriggerOrigins": EDGE,
  "docpipe.v1.TriggerService/CreateRun": EDGE,
  "docpipe.v1.TriggerService/CreateRuns": EDGE,
  "docpipe.v1.TriggerService/ClaimIdempotencyKey": EDGE,
  "docpipe.v1.TriggerService/ReleaseIdempotencyKey": EDGE,
  "docpipe.v1.TriggerService/ResolveEmailTrigger": EDGE,
};

/** The console's route to a run's stored document (not an RPC): whoever may read the run may read its document. */
export const RUN_DOCUMENT_RULE: RpcRule = org("runs.read", "run", "runId");
/** The console's test document route (`POST /test-runs/<organizationId>/<pipeId>`): who may change the pipe may try it. */
export const TEST_RUN_RULE: RpcRule = org("pipes.write", "pipe", "pipeId");

/** Whether a call under this rule changes something, and so goes to the audit log. */
export function isChange(rule: RpcRule): boolean {
  if (rule.scope === "operator") return true;
  return rule.scope === "organization" && !rule.permission.endsWith(".read");
}
