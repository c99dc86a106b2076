import { type Kysely, sql } from "kysely";

// Frozen: never edit a migration that has shipped; add a new one.
// People and what they may do: accounts, their sessions, memberships of organizations with a role,
// invitations by link, service tokens, failed sign-in counters and the audit log. Secrets (session
// tokens, invitation tokens, service tokens) are stored as SHA-256 digests, passwords as argon2id.
// API keys may be limited to chosen pipes and/or workspaces (null: the whole organization).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("accounts")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("email", "text", (col) => col.notNull())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("password_hash", "text")
    .addColumn("oidc_subject", "text")
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("accounts_email_idx").on("accounts").expression(sql`lower(email)`).unique().execute();
  await db.schema.createIndex("accounts_oidc_subject_idx").on("accounts").column("oidc_subject").unique().execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("digest", "bytea", (col) => col.notNull().unique())
    .addColumn("account_id", "uuid", (col) => col.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("create_time", "timestamptz", (col) => col.notNull())
    .addColumn("last_seen_time", "timestamptz", (col) => col.notNull())
    .addColumn("expire_time", "timestamptz", (col) => col.notNull())
    .addColumn("address", "text", (col) => col.notNull())
    .execute();
  await db.schema.createIndex("sessions_account_idx").on("sessions").column("account_id").execute();

  await db.schema
    .createTable("memberships")
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("account_id", "uuid", (col) => col.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("role", "text", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull())
    .addPrimaryKeyConstraint("memberships_pkey", ["organization_id", "account_id"])
    .execute();
  await db.schema.createIndex("memberships_account_idx").on("memberships").column("account_id").execute();

  await db.schema
    .createTable("invitations")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("digest", "bytea", (col) => col.notNull().unique())
    .addColumn("email", "text", (col) => col.notNull())
    .addColumn("role", "text", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull())
    .addColumn("expire_time", "timestamptz", (col) => col.notNull())
    .execute();
  await db.schema.createIndex("invitations_organization_idx").on("invitations").columns(["organization_id", "id"]).execute();

  await db.schema
    .createTable("service_tokens")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("digest", "bytea", (col) => col.notNull().unique())
    .addColumn("hint", "text", (col) => col.notNull())
    .addColumn("role", "text", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull())
    .addColumn("expire_time", "timestamptz")
    .addColumn("last_used_time", "timestamptz")
    .execute();
  await db.schema.createIndex("service_tokens_organization_idx").on("service_tokens").columns(["organization_id", "id"]).execute();

  // One row per account or client address that failed to sign in within the current window.
  await db.schema
    .createTable("sign_in_failures")
    .addColumn("subject", "text", (col) => col.primaryKey())
    .addColumn("failures", "integer", (col) => col.notNull())
    .addColumn("window_start", "timestamptz", (col) => col.notNull())
    .execute();

  await db.schema
    .createTable("audit_events")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.references("organizations.id").onDelete("cascade"))
    .addColumn("time", "timestamptz", (col) => col.notNull())
    .addColumn("actor_kind", "text", (col) => col.notNull())
    .addColumn("actor_id", "text", (col) => col.notNull())
    .addColumn("actor_name", "text", (col) => col.notNull())
    .addColumn("action", "text", (col) => col.notNull())
    .addColumn("resource_type", "text", (col) => col.notNull())
    .addColumn("resource_id", "text", (col) => col.notNull())
    .addColumn("address", "text", (col) => col.notNull())
    .addColumn("outcome", "text", (col) => col.notNull())
    .execute();
  await db.schema.createIndex("audit_events_organization_idx").on("audit_events").columns(["organization_id", "id"]).execute();
  await db.schema.createIndex("audit_events_time_idx").on("audit_events").column("time").execute();

  await db.schema.alterTable("api_keys").addColumn("pipe_ids", sql`uuid[]`).addColumn("workspace_ids", sql`uuid[]`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("api_keys").dropColumn("pipe_ids").dropColumn("workspace_ids").execute();
  for (const table of ["audit_events", "sign_in_failures", "service_tokens", "invitations", "memberships", "sessions", "accounts"]) {
    await db.schema.dropTable(table).execute();
  }
}
