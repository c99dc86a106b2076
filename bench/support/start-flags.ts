import { readFileSync } from "node:fs";

/**
 * The Node flags of `npm start` (package.json's start script), so that benchmarks and the tests that
 * start `src/app/main.ts` run the service as it ships.
 */
export function startScriptNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } };
  const command = scripts.start.slice(scripts.start.lastIndexOf("node ") + "node ".length);
  return command.split(/\s+/).filter((word) => word.startsWith("--"));
}
