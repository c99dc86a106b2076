import type { Insertable, Kysely, Selectable } from "kysely";
import type { Database, WorkspaceTable } from "../db/schema.ts";

/** What a workspace shows; deleted workspaces are never returned, so delete_time is not among them. */
const WORKSPACE_COLUMNS = ["id", "organization_id", "name", "is_default", "create_time", "update_time"] as const;

export type WorkspaceRow = Pick<Selectable<WorkspaceTable>, (typeof WORKSPACE_COLUMNS)[number]>;

export type WorkspaceDeletion = "deleted" | "not_found" | "default";

export async function insertWorkspace(db: Kysely<Database>, workspace: Insertable<WorkspaceTable>): Promise<WorkspaceRow> {
  return db.insertInto("workspaces").values(workspace).returning(WORKSPACE_COLUMNS).executeTakeFirstOrThrow();
}

export async function findWorkspace(db: Kysely<Database>, organizationId: string, workspaceId: string): Promise<WorkspaceRow | undefined> {
  return db
    .selectFrom("workspaces")
    .select(WORKSPACE_COLUMNS)
    .where("organization_id", "=", organizationId)
    .where("id", "=", workspaceId)
    .where("delete_time", "is", null)
    .executeTakeFirst();
}

/** Up to `limit` live workspaces of the organization, oldest (so the default) first, after `afterId` when given. */
export async function listWorkspaces(
  db: Kysely<Database>,
  options: { organizationId: string; afterId: string | undefined; limit: number },
): Promise<WorkspaceRow[]> {
  let query = db.selectFrom("workspaces").select(WORKSPACE_COLUMNS).where("organization_id", "=", options.organizationId).where("delete_time", "is", null);
  if (options.afterId !== undefined) query = query.where("id", ">", options.afterId);
  return query.orderBy("id", "asc").limit(options.limit).execute();
}

export async function renameWorkspace(
  db: Kysely<Database>,
  organizationId: string,
  workspaceId: string,
  name: string,
  now: Date,
): Promise<WorkspaceRow | undefined> {
  return db
    .updateTable("workspaces")
    .set({ name, update_time: now })
    .where("organization_id", "=", organizationId)
    .where("id", "=", workspaceId)
    .where("delete_time", "is", null)
    .returning(WORKSPACE_COLUMNS)
    .executeTakeFirst();
}

/**
 * Soft-deletes a non-default workspace and its pipes in one transaction; their runs and files are
 * kept and stay readable. The row is locked first, so a concurrent rename or delete waits.
 */
export async function deleteWorkspace(db: Kysely<Database>, organizationId: string, workspaceId: string, now: Date): Promise<WorkspaceDeletion> {
  return db.transaction().execute(async (trx) => {
    const workspace = await trx
      .selectFrom("workspaces")
      .select("is_default")
      .where("organization_id", "=", organizationId)
      .where("id", "=", workspaceId)
      .where("delete_time", "is", null)
      .forUpdate()
      .executeTakeFirst();
    if (workspace === undefined) return "not_found";
    if (workspace.is_default) return "default";
    await trx.updateTable("workspaces").set({ delete_time: now }).where("id", "=", workspaceId).execute();
    await trx.updateTable("pipes").set({ delete_time: now }).where("workspace_id", "=", workspaceId).where("delete_time", "is", null).execute();
    return "deleted";
  });
}
