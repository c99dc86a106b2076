import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** `import … from "x"`, `import "x"` and `export … from "x"`: the imports a module's loading follows (not `import("x")`). */
const STATIC_IMPORT = /^(?:import|export)\s(?:[^;]*?\sfrom\s)?["']([^"']+)["']/gm;

/**
 * The packages a module loads with it: its static imports, followed through our own files (type-only
 * imports excluded, as Node strips them). Dynamic `import()` is not followed: that is what it is for.
 */
export function staticallyImportedPackages(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [statement, specifier] of readFileSync(file, "utf8").matchAll(STATIC_IMPORT)) {
      if (/^(?:import|export)\s+type\s/.test(statement)) continue;
      if (specifier!.startsWith(".")) {
        if (specifier!.endsWith(".ts")) visit(resolve(dirname(file), specifier!));
      } else if (!specifier!.startsWith("node:")) {
        packages.add(specifier!.startsWith("@") ? specifier!.split("/").slice(0, 2).join("/") : specifier!.split("/")[0]!);
      }
    }
  };
  visit(resolve(entry));
  return packages;
}
