import type { Migration } from "kysely/migration";
import * as initial from "./2026-11-22T0000-initial.ts";

/** Every migration, by name; names sort in the order they run. */
export const migrations: Record<string, Migration> = {
  "2026-11-22T0000-initial": initial,
};
