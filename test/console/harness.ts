import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { expect, inject } from "vitest";
import { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { createServiceClients, type ServiceClients } from "../../src/api/clients.ts";
import { startScriptNodeFlags } from "../../bench/support/start-flags.ts";
import { testDatabaseUrl } from "../support/database.ts";

export { CHROMIUM, launchChromium } from "../support/chromium.ts";

export interface ConsoleServer {
  /** The internal port's base URL: the Connect services and the console at /console/. */
  internalUrl: string;
  /** The public REST edge. */
  edgeUrl: string;
  /** The services, over HTTP like any other internal caller. */
  clients: ServiceClients & { signingSecrets: Client<typeof SigningSecretService> };
  /** The process's INTERNAL_TOKEN: the operator's credential. */
  operatorToken: string;
  /** Stops the process (SIGTERM) and removes its storage folder. */
  close(): Promise<void>;
}

/** The operator token startConsoleServer gives its process unless the test gives one. */
const OPERATOR_TOKEN = "console-test-operator";

/** Waits until the child's log has a line matching `pattern`; returns the match. */
async function logLine(child: ChildProcess, output: { text: string }, pattern: RegExp): Promise<RegExpExecArray> {
  for (;;) {
    const match = pattern.exec(output.text);
    if (match !== null) return match;
    if (child.exitCode !== null) throw new Error(`docpipe exited ${child.exitCode}: ${output.text}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/**
 * docpipe as `npm start` runs it (`node src/app/main.ts` with every role, serving the console that
 * build-setup.ts built) on the test run's PostgreSQL, ports chosen by the system. Stopped after the
 * file's tests.
 */
export async function startConsoleServer(given: Record<string, string> = {}): Promise<ConsoleServer> {
  const env = { INTERNAL_TOKEN: OPERATOR_TOKEN, ...given };
  const storageDir = await mkdtemp(join(tmpdir(), "docpipe-console-"));
  const child = spawn(process.execPath, [...startScriptNodeFlags(), "src/app/main.ts"], {
    cwd: resolve(import.meta.dirname, "../.."),
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: await testDatabaseUrl(),
      HOST: "127.0.0.1",
      PORT: "0",
      INTERNAL_PORT: "0",
      STORAGE_DIR: storageDir,
      LOG_LEVEL: "info",
      SEED_DEMO: "false",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { text: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.text += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk));
  const close = async () => {
    child.kill("SIGTERM");
    if (child.exitCode === null) await once(child, "exit");
    await rm(storageDir, { recursive: true, force: true });
  };
  const internalPort = (await logLine(child, output, /"port":(\d+)[^\n]*"msg":"internal Connect services listening"/))[1];
  const edgeUrl = (await logLine(child, output, /Server listening at (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  const internalUrl = `http://127.0.0.1:${internalPort}`;
  const headers: Record<string, string> = { authorization: `Bearer ${env.INTERNAL_TOKEN}` };
  const transport = createConnectTransport({
    baseUrl: internalUrl,
    httpVersion: "1.1",
    interceptors: [(next) => (request) => (Object.entries(headers).forEach(([name, value]) => request.header.set(name, value)), next(request))],
  });
  return {
    internalUrl,
    edgeUrl,
    clients: { ...createServiceClients(transport), signingSecrets: createClient(SigningSecretService, transport) },
    operatorToken: env.INTERNAL_TOKEN,
    close,
  };
}

/** A page of its own browser context, signed in to the console as the operator (the token it keeps in sessionStorage). */
export async function operatorPage(browser: Browser, server: ConsoleServer, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  // Every frame runs it; a frame without storage (the Review page's document) has none to fill.
  await context.addInitScript((token) => globalThis.sessionStorage?.setItem("docpipe.internalToken", token), server.operatorToken);
  return context.newPage();
}

/** A database of its own on the test run's PostgreSQL server, with nothing in it, and how to drop it. */
export async function emptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = inject("databaseServerUrl");
  const name = `docpipe_console_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const drop = async () => {
    const dropper = new pg.Client({ connectionString: serverUrl });
    await dropper.connect();
    await dropper.query(`drop database if exists ${name} with (force)`);
    await dropper.end();
  };
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop };
}

/**
 * What went wrong in the page that no assertion looks at: uncaught exceptions and requests the
 * Content-Security-Policy refused. The returned list fills as the page runs.
 */
export function pageFaults(page: Page): string[] {
  const faults: string[] = [];
  page.on("pageerror", (error) => faults.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && message.text().includes("Content Security Policy")) faults.push(message.text());
  });
  return faults;
}

/** axe-core on the page as it is now: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  expect(results.passes.length, "axe checked nothing").toBeGreaterThan(10);
  const serious = results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => ({
      rule: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(" ")),
    }));
  expect(serious).toEqual([]);
}

/**
 * The screenshots in docs/ come from these tests. They are written there with SCREENSHOTS=1
 * (`npm run screenshots`); otherwise to a temporary folder, so that `npm test` leaves the tree as it was.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.SCREENSHOTS === "1" ? resolve(import.meta.dirname, "../../docs") : await mkdtemp(join(tmpdir(), "docpipe-screens-"));
  await page.mouse.move(0, 0); // no hover state in the picture
  await page.screenshot({ path: join(dir, `console-${name}.png`), fullPage: true });
  if (process.env.SCREENSHOTS !== "1") await rm(dir, { recursive: true, force: true });
}

/** Submits one file to a pipe's trigger with a key, as an external program does; returns the response. */
export async function submit(
  edgeUrl: string,
  pipeId: string,
  keyValue: string,
  file: { bytes: Uint8Array; fileName: string; contentType: string },
): Promise<Response> {
  const form = new FormData();
  form.append("file", new Blob([file.bytes], { type: file.contentType }), file.fileName);
  return fetch(`${edgeUrl}/pipes/${pipeId}/trigger`, { method: "POST", headers: { "x-api-key": keyValue }, body: form });
}
