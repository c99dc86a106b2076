import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";
import { pdfjsAssets } from "./pdfjs-assets.ts";

/** The console is served by the internal server under /console/ (see src/inbound/rpc/console.ts). */
export default defineConfig({
  root: import.meta.dirname,
  base: "/console/",
  plugins: [react(), pdfjsAssets()],
  logLevel: "warn",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 },
});
