import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";

/** A user and group of this machine, by id. */
export interface Owner {
  uid: number;
  gid: number;
}

/**
 * Whether every existing ancestor of `path` lets `owner` pass through it (its execute bit for
 * others, or for its owner or group when they are `owner`'s): a folder of mode 0700 above a
 * checkout (`/root`, a `mktemp -d` folder) stops every other user.
 */
export function reachableBy(owner: Owner, path: string): boolean {
  for (let current = dirname(path); ; current = dirname(current)) {
    if (existsSync(current)) {
      const { mode, uid, gid } = statSync(current);
      const passes = (mode & 0o001) !== 0 || (uid === owner.uid && (mode & 0o100) !== 0) || (gid === owner.gid && (mode & 0o010) !== 0);
      if (!passes) return false;
    }
    if (current === dirname(current)) return true;
  }
}
