import type { Kysely } from "kysely";

// A pipe in test mode: its callbacks record the request they would have sent and send nothing.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("pipes")
    .addColumn("test_mode", "boolean", (col) => col.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("pipes").dropColumn("test_mode").execute();
}
