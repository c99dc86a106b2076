import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const run = promisify(execFile);

// Every thread of the child (tesseract.js starts its own) preloads this: any network use throws.
const NO_NETWORK = `
import net from "node:net";
const refuse = () => { throw new Error("network use at run time"); };
net.Socket.prototype.connect = refuse;
globalThis.fetch = refuse;
`;

const source = (path: string) => new URL(`../../${path}`, import.meta.url).href;

const CHILD = `
import { parseDocument } from "${source("src/documents/parse/parse-document.ts")}";
import { closeOcr } from "${source("src/documents/parse/ocr.ts")}";
import { textPng } from "${source("test/parse/ocr-samples.ts")}";
const output = await parseDocument("png", textPng(["Read without a network"]), { languages: ["eng", "deu", "fra"] });
await closeOcr();
process.stdout.write(output.text);
`;

it("OCR needs no network: with every socket and fetch refused, each installed language loads and reads", async () => {
  const folder = await mkdtemp(join(tmpdir(), "docpipe-offline-"));
  try {
    await writeFile(join(folder, "preload.mjs"), NO_NETWORK);
    await writeFile(join(folder, "child.mjs"), CHILD);
    const { stdout } = await run(process.execPath, ["--import", join(folder, "preload.mjs"), join(folder, "child.mjs")], { timeout: 60_000 });
    expect(stdout).toBe("Read without a network");
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
