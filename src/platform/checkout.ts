import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/** The checkout: the nearest folder above this file that holds package.json (`src/`, `node_modules/` and `console/` are its children). */
export const CHECKOUT = checkoutAbove(import.meta.dirname);

function checkoutAbove(folder: string): string {
  for (let dir = folder; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${folder}`);
  }
}
