import { type Kysely, sql } from "kysely";

// A run's organization and workspace are its pipe's: every insert copies them from the pipe (or from
// the run it reruns or splits), and a pipe never moves. The run's foreign key to its pipe, whose own
// keys reach its workspace and organization, already holds them, cascades included. Their own
// foreign keys cost each submission two more lookups and share locks, the workspace's row being
// locked by no other key of the statement (PostgreSQL records each new locker of a row in a
// multixact and logs the lock; the organization's row stays locked through the file's key):
// CreateRun ran about a fifth faster without them (pgbench, 16 clients).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table runs drop constraint runs_organization_id_fkey, drop constraint runs_workspace_id_fkey`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table runs
    add constraint runs_organization_id_fkey foreign key (organization_id) references organizations (id) on delete cascade,
    add constraint runs_workspace_id_fkey foreign key (workspace_id) references workspaces (id) on delete cascade`.execute(db);
}
