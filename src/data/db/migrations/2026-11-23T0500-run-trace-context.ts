import type { Kysely } from "kysely";

// The W3C traceparent of the submission that created a run (null when tracing was off), so the
// worker's spans for the run join the submission's trace.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").addColumn("trace_parent", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").dropColumn("trace_parent").execute();
}
