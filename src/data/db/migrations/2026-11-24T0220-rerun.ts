import type { Kysely } from "kysely";

// A run made by RunService.RerunRun records the run it reran (null once that run is deleted).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("runs")
    .addColumn("rerun_of", "uuid", (col) => col.references("runs.id").onDelete("set null"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").dropColumn("rerun_of").execute();
}
