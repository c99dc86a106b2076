import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { notFound } from "../services/errors.ts";
import { isUuid } from "../services/ids.ts";

/** The organization row, or NotFound (organization_not_found) when there is none with that id. */
export async function requireOrganization(db: Kysely<Database>, organizationId: string) {
  const organization = isUuid(organizationId)
    ? await db.selectFrom("organizations").selectAll().where("id", "=", organizationId).executeTakeFirst()
    : undefined;
  if (organization === undefined) throw notFound("organization");
  return organization;
}
