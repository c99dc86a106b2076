import { isUuid } from "../platform/ids.ts";
import { invalidArgument } from "./errors.ts";

/**
 * The X-Workspace-Id style argument: empty means the default workspace (undefined). A malformed id is
 * a client mistake (400 at the edge), unlike an unknown one, which is NotFound.
 */
export function workspaceIdArgument(workspaceId: string): string | undefined {
  if (workspaceId === "") return undefined;
  if (!isUuid(workspaceId)) throw invalidArgument("workspace_id", "workspace_id must be a UUID", "workspace_id_invalid");
  // In the database's lower case: ids are compared as text against a key's limits and in cache keys.
  return workspaceId.toLowerCase();
}
