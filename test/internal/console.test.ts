import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { CONSOLE_PATH, type ConsoleSettings, consoleHandler, loadConsole } from "../../src/inbound/rpc/console.ts";
import { startInternalServer } from "../../src/inbound/rpc/server.ts";
import { notFound } from "../../src/api/errors.ts";

const INDEX = "<!doctype html><title>console</title>";
const SCRIPT = "console.log('console');";

/** A built console as Vite lays it out: index.html and content-hashed assets. */
async function fakeBuild(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "docpipe-console-dist-"));
  await mkdir(join(dir, "assets"));
  await writeFile(join(dir, "index.html"), INDEX);
  await writeFile(join(dir, "assets", "index-Ab12.js"), SCRIPT);
  return dir;
}

async function serve(handler: ReturnType<typeof consoleHandler>): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The headers every answer of the console carries, its 404 and 405 included (docs/security.md). */
function expectSecurityHeaders(response: Response): void {
  expect([response.headers.get("content-security-policy"), response.headers.get("x-content-type-options"), response.headers.get("referrer-policy")]).toEqual([
    "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
    "nosniff",
    "no-referrer",
  ]);
}

describe("the console's files on the internal port", () => {
  let dir: string;
  let url: string;
  let server: Server;
  let settings: ConsoleSettings = { edgeUrl: undefined, singleSignOn: false, emailDomain: undefined };

  beforeAll(async () => {
    dir = await fakeBuild();
    ({ url, server } = await serve(consoleHandler(await loadConsole(dir), () => settings)));
  });
  afterAll(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(["/", "/console"])("%s leads to /console/ (308)", async (path) => {
    const response = await fetch(url + path, { redirect: "manual" });
    expect([response.status, response.headers.get("location")]).toEqual([308, CONSOLE_PATH]);
  });

  it("/console/ is index.html, revalidated every time, with a strict content security policy", async () => {
    const response = await fetch(`${url}/console/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await response.text()).toBe(INDEX);
  });

  it("hashed assets are cached for good; a matching ETag gets 304", async () => {
    const response = await fetch(`${url}/console/assets/index-Ab12.js`);
    expect([response.status, response.headers.get("content-type"), response.headers.get("cache-control")]).toEqual([
      200,
      "text/javascript; charset=utf-8",
      "public, max-age=31536000, immutable",
    ]);
    expect(await response.text()).toBe(SCRIPT);
    const again = await fetch(`${url}/console/assets/index-Ab12.js`, { headers: { "if-none-match": response.headers.get("etag")! } });
    expect([again.status, await again.text()]).toEqual([304, ""]);
  });

  it("HEAD has the headers and no body", async () => {
    const response = await fetch(`${url}/console/`, { method: "HEAD" });
    expect([response.status, response.headers.get("content-length"), await response.text()]).toEqual([200, String(INDEX.length), ""]);
  });

  it("settings.json says where the edge is, as it is now, and whether single sign-on is offered", async () => {
    expect(await (await fetch(`${url}/console/settings.json`)).json()).toEqual({ singleSignOn: false });
    settings = { edgeUrl: "http://localhost:8080", singleSignOn: true, emailDomain: "mail.example.com" };
    const response = await fetch(`${url}/console/settings.json`);
    expect([response.headers.get("cache-control"), await response.json()]).toEqual([
      "no-store",
      { edgeUrl: "http://localhost:8080", singleSignOn: true, emailDomain: "mail.example.com" },
    ]);
  });

  it.each(["/console/missing.js", "/console/%2e%2e/package.json", "/console/..%2fpackage.json", "/console/assets/", "/package.json", "/metrics-not-here"])(
    "%s is 404: only the built files are served",
    async (path) => {
      const response = await fetch(url + path);
      expect([response.status, response.headers.get("content-type")]).toEqual([404, "text/plain; charset=utf-8"]);
      expectSecurityHeaders(response);
    },
  );

  it("other methods are 405 with Allow", async () => {
    const response = await fetch(`${url}/console/`, { method: "POST", body: "x" });
    expect([response.status, response.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    expectSecurityHeaders(response);
  });
});

describe("a console that was not built", () => {
  it("loads as undefined, and /console/ says how to build it (503)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "docpipe-console-empty-"));
    try {
      expect(await loadConsole(join(dir, "absent"))).toBeUndefined();
      expect(await loadConsole(dir)).toBeUndefined();
      const { url, server } = await serve(consoleHandler(undefined, () => ({ edgeUrl: undefined, singleSignOn: false, emailDomain: undefined })));
      const response = await fetch(`${url}/console/`);
      expect([response.status, await response.text()]).toEqual([503, "The console is not built: run `npm run build:console`.\n"]);
      server.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the internal server: RPCs and the console on one port", () => {
  it("routes Connect calls to the services and everything else to the console", async () => {
    const dir = await fakeBuild();
    const internal = await startInternalServer(
      (router) => router.service(WorkspaceService, { getOrganization: () => Promise.reject(notFound("organization")) }),
      {
        host: "127.0.0.1",
        port: 0,
        allowedHosts: ["127.0.0.1"],
        fallback: consoleHandler(await loadConsole(dir), () => ({ edgeUrl: undefined, singleSignOn: false, emailDomain: undefined })),
      },
    );
    try {
      const baseUrl = `http://127.0.0.1:${internal.port}`;
      const client = createClient(WorkspaceService, createConnectTransport({ baseUrl, httpVersion: "2" }));
      await expect(client.getOrganization({ organizationId: "x" })).rejects.toThrow("organization not found");
      expect(await (await fetch(`${baseUrl}/console/`)).text()).toBe(INDEX);
    } finally {
      await internal.close(1000);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
