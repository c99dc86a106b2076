import { afterAll } from "vitest";
import { runAfterFile } from "./after-file.ts";

// A setupFile (vitest.config.ts): registers, in every test file, the afterAll that runs its afterFile cleanups.
afterAll(runAfterFile);
