import type { Db } from "../data/db/schema.ts";
import { organizationExists } from "../data/repositories/organizations.ts";
import { notFound } from "./errors.ts";

/** NotFound (organization_not_found) unless the organization a request names exists. */
export async function requireOrganization(db: Db, organizationId: string): Promise<void> {
  if (!(await organizationExists(db, organizationId))) throw notFound("organization");
}
