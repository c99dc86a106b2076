import type { Kysely } from "kysely";

// A step a rerun copies from the run it reruns keeps that step's times and names the run that
// executed it. No foreign key: the mark stays true once that run is deleted (retention), and
// deleting a run need not look for steps that name it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("run_steps").addColumn("copied_from_run_id", "uuid").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("run_steps").dropColumn("copied_from_run_id").execute();
}
