import type { Kysely } from "kysely";

// The message a run's document came attached to, when it came by email: {"sender", "subject",
// "messageId"}, so the run data can show them. Null for runs triggered over HTTP.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").addColumn("email", "jsonb").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").dropColumn("email").execute();
}
