import { afterAll } from "vitest";
import { dropTestDatabase } from "./database.ts";

// Runs before each test file, also when test files share one module graph (the fast tier's
// `isolate: false`): a module's top-level hooks would run for the first file that imports it only.
afterAll(dropTestDatabase);
