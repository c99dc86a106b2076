import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import type { ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import { CHECKOUT } from "../../platform/checkout.ts";

/** Where `npm run build:console` (and `npm ci`, `npm start`) write the console's files. */
export const CONSOLE_DIST_DIR = join(CHECKOUT, "console", "dist");

/** The console's address on the internal port. */
export const CONSOLE_PATH = "/console/";

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
  /** Vite names assets by their content hash, so they never change under one URL. */
  immutable: boolean;
}

/** The built console: URL path (below /console/) -> file. Undefined when it has not been built. */
export type ConsoleSite = ReadonlyMap<string, StaticFile> | undefined;

/** The Connect adapter's fallback: what it calls for a request that is no RPC. */
type Handler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;
type Response = Parameters<Handler>[1];

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  // pdf.js's worker (a module) and its image decoders, for the Review page.
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

/**
 * The page only talks to its own origin (the Connect services beside it) and is never framed. The
 * Review page shows a run's picture from a blob: URL it made of the fetched bytes (only raster
 * pictures become such URLs, see run-documents.ts) and renders a PDF itself, with pdf.js, whose
 * worker and data files are the console's own.
 */
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Reads the built console into memory once (a few hundred KB). Requests are then answered from this
 * map, so a URL never becomes a file-system path: nothing outside the build can be reached.
 */
export async function loadConsole(dir: string = CONSOLE_DIST_DIR): Promise<ConsoleSite> {
  const paths = await listFiles(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (paths === undefined || !paths.includes(join(dir, "index.html"))) return undefined;
  const site = new Map<string, StaticFile>();
  for (const path of paths) {
    const body = await readFile(path);
    const urlPath = relative(dir, path).split(sep).join("/");
    site.set(urlPath, {
      body,
      type: TYPES[extname(path)] ?? "application/octet-stream",
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
      immutable: urlPath.startsWith("assets/"),
    });
  }
  return site;
}

function send(response: Response, status: number, headers: Record<string, string>, body?: string | Buffer): void {
  response.statusCode = status;
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  if (body === undefined) response.end();
  else response.end(body);
}

function plain(response: Response, status: number, text: string, headers: Record<string, string> = {}): void {
  send(response, status, { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", ...headers }, `${text}\n`);
}

/** What the console learns from the process that serves it, at `/console/settings.json`. */
export interface ConsoleSettings {
  /** The public REST edge's base URL, for the trigger URLs and curl commands; undefined while it is not listening (or not in this process). */
  edgeUrl: string | undefined;
  /** Whether people may sign in with the OpenID provider (/auth/oidc/start). */
  singleSignOn: boolean;
  /** The domain email triggers receive for (EMAIL_DOMAIN), when this deployment receives mail (EMAIL_PORT); undefined otherwise. */
  emailDomain: string | undefined;
}

/**
 * Answers what the Connect router does not: `/` and `/console` lead to `/console/`, which serves the
 * console's files and its settings (GET and HEAD only). Everything else is 404.
 */
export function consoleHandler(site: ConsoleSite, settings: () => ConsoleSettings): Handler {
  return (request, response) => {
    const path = new URL(request.url ?? "/", "http://internal").pathname;
    if (path === "/" || path === "/console") return plain(response, 308, `See ${CONSOLE_PATH}`, { location: CONSOLE_PATH });
    if (!path.startsWith(CONSOLE_PATH)) return plain(response, 404, "Not found");
    if (request.method !== "GET" && request.method !== "HEAD") return plain(response, 405, "Method not allowed", { allow: "GET, HEAD" });
    if (path === `${CONSOLE_PATH}settings.json`) {
      return send(response, 200, { ...SECURITY_HEADERS, "content-type": "application/json", "cache-control": "no-store" }, JSON.stringify(settings()));
    }
    if (site === undefined) return plain(response, 503, "The console is not built: run `npm run build:console`.");
    const file = site.get(path === CONSOLE_PATH ? "index.html" : path.slice(CONSOLE_PATH.length));
    if (file === undefined) return plain(response, 404, "Not found");
    const headers = {
      ...SECURITY_HEADERS,
      "content-type": file.type,
      etag: file.etag,
      "cache-control": file.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    };
    if (request.headers["if-none-match"] === file.etag) return send(response, 304, headers);
    send(response, 200, { ...headers, "content-length": String(file.body.length) }, request.method === "HEAD" ? undefined : file.body);
  };
}
