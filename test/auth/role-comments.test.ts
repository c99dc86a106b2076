import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type Permission, type RoleName, roleAllows } from "../../src/platform/auth/roles.ts";

const PROTO = readFileSync(resolve(import.meta.dirname, "../../proto/docpipe/v1/account.proto"), "utf8");

/** What each read permission is called in a role's comment (and in docs/security.md's role table). */
const READS: Record<string, Permission> = {
  "the organization": "organization.read",
  workspaces: "workspaces.read",
  pipes: "pipes.read",
  keys: "keys.read",
  runs: "runs.read",
  members: "members.read",
  "signing-secret hints": "signing_secrets.read",
};

/** The list after `Reads:` in the comment above `ROLE_<NAME> =`, up to its full stop. */
function commentReads(role: RoleName): string[] {
  const comment = new RegExp(`((?:\\s*//[^\\n]*\\n)+)\\s*ROLE_${role.toUpperCase()} =`).exec(PROTO)![1]!;
  const text = comment.replace(/\s*\/\/\s*/g, " ");
  return /Reads: ([^.]+)\./.exec(text)![1]!.split(", ");
}

describe("the roles' proto comments say what the role table (src/platform/auth/roles.ts, docs/security.md) gives", () => {
  it.each(["member", "reviewer", "viewer"] as const)("ROLE_%s reads exactly what its permissions let it read", (role) => {
    const reads = Object.entries(READS)
      .filter(([, permission]) => roleAllows(role, permission))
      .map(([name]) => name);
    expect(commentReads(role)).toEqual(reads);
  });
});
