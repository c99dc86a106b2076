/**
 * ` owner <role>` for a `create database` statement: the role `url` connects as, so that the tests
 * work in databases that role owns; empty when the URL names no user (the server's default one).
 * Its own file: the global setup imports it, outside vitest's test context.
 */
export function ownerClause(url: string): string {
  const user = decodeURIComponent(new URL(url).username);
  return user === "" ? "" : ` owner "${user.replaceAll('"', '""')}"`;
}
