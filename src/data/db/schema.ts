import type { ColumnType, Kysely } from "kysely";
import type { MemberRole } from "../../platform/auth/roles.ts";

/** A column the database fills in on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface OrganizationTable {
  id: string;
  name: string;
  plan: string;
  create_time: Timestamp;
}

export interface WorkspaceTable {
  id: string;
  organization_id: string;
  name: string;
  is_default: Defaulted<boolean>;
  create_time: Timestamp;
  update_time: Timestamp;
  delete_time: NullableTimestamp;
}

type ApiKeyState = "active" | "deactivated";

export interface ApiKeyTable {
  id: string;
  organization_id: string;
  name: string;
  /** SHA-256 of the whole key value; the value itself is never stored. */
  digest: Buffer;
  hint: string;
  permissions: string[];
  state: ApiKeyState;
  create_time: Timestamp;
  expire_time: NullableTimestamp;
  last_used_time: NullableTimestamp;
  deactivate_time: NullableTimestamp;
  /** The pipes the key may trigger; null: every pipe of its organization. */
  pipe_ids: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** The workspaces whose pipes the key may trigger; null: every workspace. */
  workspace_ids: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
}

export type PipeState = "active" | "paused";

export interface PipeTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  description: Defaulted<string>;
  state: PipeState;
  pipeline_version: number;
  create_time: Timestamp;
  update_time: Timestamp;
  delete_time: NullableTimestamp;
  /** Nodes that reach outside record what they would send and send nothing. */
  test_mode: Defaulted<boolean>;
  /** Days its runs are kept; 0 keeps them all. */
  retention_days: Defaulted<number>;
}

interface PipelineVersionTable {
  pipe_id: string;
  version: number;
  /** The Pipeline message in its proto JSON form. */
  pipeline: ColumnType<unknown, string, string>;
  create_time: Timestamp;
}

export interface FileTable {
  id: string;
  organization_id: string;
  name: string;
  content_type: string;
  format: string;
  /** bigint arrives from pg as a string. */
  size: ColumnType<string, number | bigint | string, never>;
  sha256: string;
  create_time: Timestamp;
}

export type RunStatus = "queued" | "running" | "completed" | "failed" | "cancelled" | "review" | "awaiting_children";

export interface RunTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  pipe_id: string;
  pipeline_version: number;
  file_id: string;
  api_key_id: string | null;
  status: RunStatus;
  error: Defaulted<string>;
  create_time: Timestamp;
  start_time: NullableTimestamp;
  end_time: NullableTimestamp;
  attempts: Defaulted<number>;
  lease_owner: string | null;
  lease_expire_time: NullableTimestamp;
  /** W3C traceparent of the submission that created the run; null when tracing was off. */
  trace_parent: string | null;
  /** The message the document came attached to, for runs triggered by email; null otherwise. */
  email: ColumnType<RunEmail | null, string | null | undefined, string | null>;
  /** The run this one reran (RunService.RerunRun). */
  rerun_of: ColumnType<string | null, string | null | undefined, string | null>;
  /** The run whose split node made this one, for one part of its document (see SplitNode). */
  parent_run_id: ColumnType<string | null, string | null | undefined, never>;
  part_index: ColumnType<number | null, number | null | undefined, never>;
  part_label: ColumnType<string | null, string | null | undefined, never>;
  /** The node a child run starts after (its parent's split node); null for a run that starts at the trigger. */
  start_node_id: ColumnType<string | null, string | null | undefined, never>;
}

/** What a run triggered by email keeps of its message. */
export interface RunEmail {
  sender: string;
  subject: string;
  messageId: string;
}

/** "waiting": a review step waiting for its decision. */
export type StepStatus = "running" | "completed" | "failed" | "waiting";

export interface RunStepTable {
  run_id: string;
  position: number;
  node_id: string;
  node_type: string;
  status: StepStatus;
  start_time: Timestamp;
  end_time: NullableTimestamp;
  output: ColumnType<unknown, string | null, string | null>;
  error: Defaulted<string>;
  /** A step a rerun copied: the run that executed it (its times are that run's); null for a step this run executed. */
  copied_from_run_id: ColumnType<string | null, string | null | undefined, never>;
}

interface IdempotencyKeyTable {
  organization_id: string;
  key: string;
  pipe_id: string;
  /** Null while the submission that claimed the key is in flight. */
  run_id: string | null;
  create_time: Timestamp;
}

export interface SigningSecretTable {
  id: string;
  organization_id: string;
  /** AES-256-GCM sealed secret value (see src/runs/deliveries/secret-box.ts). */
  ciphertext: Buffer;
  /** The last four characters of the value, for listings. */
  hint: string;
  create_time: Timestamp;
  /** Null for the current secret; set when rotated out (it signs until then). */
  expire_time: NullableTimestamp;
}

export type DeliveryStatus = "pending" | "delivered" | "failed" | "cancelled";

export interface CallbackDeliveryTable {
  id: string;
  run_id: string;
  organization_id: string;
  node_id: string;
  url: string;
  method: string;
  /** The callback node's headers as the pipeline stores them (values sealed). */
  headers: ColumnType<Record<string, string>, string, string>;
  timeout_ms: number;
  /** The payload, exactly as every attempt sends it. */
  body: string;
  status: DeliveryStatus;
  attempts: Defaulted<number>;
  /** The attempt number after which a failure is final; a redelivery raises it. */
  last_attempt: number;
  next_attempt_time: NullableTimestamp;
  lease_owner: string | null;
  lease_expire_time: NullableTimestamp;
  create_time: Defaulted<Date>;
  update_time: Defaulted<Date>;
}

export interface CallbackDeliveryAttemptTable {
  delivery_id: string;
  number: number;
  start_time: Timestamp;
  /** Null while the attempt is in flight. */
  duration_ms: number | null;
  /** The receiver's HTTP status; null when none came. */
  http_status: number | null;
  error: Defaulted<string>;
  next_attempt_time: NullableTimestamp;
}

export interface AccountTable {
  id: string;
  email: string;
  name: string;
  /** argon2id (PHC string); null for accounts that sign in only through single sign-on. */
  password_hash: string | null;
  /** `issuer|sub` of the OpenID Connect identity linked to the account. */
  oidc_subject: string | null;
  create_time: Timestamp;
}

export interface SessionTable {
  id: string;
  /** SHA-256 of the session token the cookie carries; the token itself is never stored. */
  digest: Buffer;
  account_id: string;
  create_time: Timestamp;
  /** Written at most about once a minute; the idle expiry counts from it. */
  last_seen_time: Timestamp;
  /** The absolute expiry: past it the session ends however active it is. */
  expire_time: Timestamp;
  address: string;
}

export interface MembershipTable {
  organization_id: string;
  account_id: string;
  role: MemberRole;
  create_time: Timestamp;
}

export interface InvitationTable {
  id: string;
  organization_id: string;
  /** SHA-256 of the invitation token the link carries. */
  digest: Buffer;
  email: string;
  role: MemberRole;
  create_time: Timestamp;
  expire_time: Timestamp;
}

export interface ServiceTokenTable {
  id: string;
  organization_id: string;
  name: string;
  /** SHA-256 of the whole token value. */
  digest: Buffer;
  hint: string;
  role: MemberRole;
  create_time: Timestamp;
  expire_time: NullableTimestamp;
  last_used_time: NullableTimestamp;
}

interface SignInFailureTable {
  /** `account:<id>` or `address:<ip>`. */
  subject: string;
  failures: number;
  window_start: Timestamp;
}

type AuditActorKind = "account" | "service_token" | "operator" | "api_key" | "anonymous";

export interface AuditEventTable {
  id: string;
  /** Null for events of no one organization (a sign-in). */
  organization_id: string | null;
  time: Timestamp;
  actor_kind: AuditActorKind;
  actor_id: string;
  /** The person's email, the token's name, "operator". */
  actor_name: string;
  /** The RPC, such as "docpipe.v1.KeyService/CreateKey", or "sign_in". */
  action: string;
  resource_type: string;
  resource_id: string;
  /** The client address the request came from. */
  address: string;
  /** "ok", or the error reason of a refused attempt (failed sign-ins). */
  outcome: string;
}

/** Every table, as the migrations make it. */
export interface Database {
  organizations: OrganizationTable;
  workspaces: WorkspaceTable;
  api_keys: ApiKeyTable;
  pipes: PipeTable;
  pipeline_versions: PipelineVersionTable;
  files: FileTable;
  runs: RunTable;
  run_steps: RunStepTable;
  idempotency_keys: IdempotencyKeyTable;
  signing_secrets: SigningSecretTable;
  callback_deliveries: CallbackDeliveryTable;
  callback_delivery_attempts: CallbackDeliveryAttemptTable;
  accounts: AccountTable;
  sessions: SessionTable;
  memberships: MembershipTable;
  invitations: InvitationTable;
  service_tokens: ServiceTokenTable;
  sign_in_failures: SignInFailureTable;
  audit_events: AuditEventTable;
}

/** A connection pool (or a transaction) on the database: what repositories are given, passed along by the layers above. */
export type Db = Kysely<Database>;
