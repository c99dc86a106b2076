import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Plugin } from "vite";

/** pdf.js's data files the review page's PDF rendering asks for: fonts, CMaps, image decoders, a colour profile. */
const FOLDERS = ["cmaps", "standard_fonts", "wasm", "iccs"];

/**
 * Copies pdf.js's data files from the pdfjs-dist package into the build under `pdfjs/`, so that the
 * console renders any PDF without fetching anything from elsewhere. They are fetched by pdf.js only
 * when a document needs them (a CJK font's CMap, a JPEG 2000 image's decoder).
 */
export function pdfjsAssets(): Plugin {
  const root = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
  return {
    name: "docpipe-pdfjs-assets",
    apply: "build",
    generateBundle() {
      for (const folder of FOLDERS) {
        for (const name of readdirSync(join(root, folder))) {
          this.emitFile({ type: "asset", fileName: `pdfjs/${folder}/${name}`, source: readFileSync(join(root, folder, name)) });
        }
      }
    },
  };
}
