import type { Insertable, Kysely, Selectable } from "kysely";
import type { Database, OrganizationTable, WorkspaceTable } from "../db/schema.ts";
import { isUuid } from "../../platform/ids.ts";
import { insertWorkspace, type WorkspaceRow } from "./workspaces.ts";

/** An organization with the id of its default workspace. */
export type OrganizationRow = Selectable<OrganizationTable> & { default_workspace_id: string };

/** Whether an organization with this id exists (an id that is not a UUID names none). */
export async function organizationExists(db: Kysely<Database>, organizationId: string): Promise<boolean> {
  if (!isUuid(organizationId)) return false;
  return (await db.selectFrom("organizations").select("id").where("id", "=", organizationId).executeTakeFirst()) !== undefined;
}

function organizationsWithDefaultWorkspace(db: Kysely<Database>) {
  return db
    .selectFrom("organizations")
    .innerJoin("workspaces", (join) => join.onRef("workspaces.organization_id", "=", "organizations.id").on("workspaces.is_default", "=", true))
    .select(["organizations.id", "organizations.name", "organizations.plan", "organizations.create_time", "workspaces.id as default_workspace_id"]);
}

/** Creates the organization and its default workspace together: an organization never lacks one. */
export async function insertOrganization(
  db: Kysely<Database>,
  organization: Insertable<OrganizationTable>,
  defaultWorkspace: Omit<Insertable<WorkspaceTable>, "organization_id" | "is_default">,
): Promise<{ organization: OrganizationRow; defaultWorkspace: WorkspaceRow }> {
  return db.transaction().execute(async (trx) => {
    const created = await trx.insertInto("organizations").values(organization).returningAll().executeTakeFirstOrThrow();
    const workspace = await insertWorkspace(trx, { ...defaultWorkspace, organization_id: created.id, is_default: true });
    return { organization: { ...created, default_workspace_id: workspace.id }, defaultWorkspace: workspace };
  });
}

export async function findOrganization(db: Kysely<Database>, organizationId: string): Promise<OrganizationRow | undefined> {
  if (!isUuid(organizationId)) return undefined;
  return organizationsWithDefaultWorkspace(db).where("organizations.id", "=", organizationId).executeTakeFirst();
}

/** Up to `limit` organizations (of `ids` when given), oldest first, after `afterId` when given. */
export async function listOrganizations(
  db: Kysely<Database>,
  options: { afterId: string | undefined; limit: number; ids?: readonly string[] | undefined },
): Promise<OrganizationRow[]> {
  let query = organizationsWithDefaultWorkspace(db);
  if (options.ids !== undefined) {
    if (options.ids.length === 0) return [];
    query = query.where("organizations.id", "in", options.ids);
  }
  if (options.afterId !== undefined) query = query.where("organizations.id", ">", options.afterId);
  return query.orderBy("organizations.id", "asc").limit(options.limit).execute();
}

/** Applies the changes given (none is fine) and returns the organization, or undefined when there is none. */
export async function updateOrganization(
  db: Kysely<Database>,
  organizationId: string,
  changes: { name?: string; plan?: string },
): Promise<OrganizationRow | undefined> {
  if (isUuid(organizationId) && Object.keys(changes).length > 0) {
    await db.updateTable("organizations").set(changes).where("id", "=", organizationId).execute();
  }
  return findOrganization(db, organizationId);
}
