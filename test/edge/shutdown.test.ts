import { connect } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { expect, it } from "vitest";
import { createServiceClients } from "../../src/api/clients.ts";
import { createDirectTransport } from "../../src/api/direct-transport.ts";
import { buildApp } from "../../src/inbound/http/app.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { SAMPLES } from "../formats/fixtures.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { createTenant, storedFiles } from "../support/edge.ts";
import { parseResponses } from "../support/raw-http.ts";
import { inProcessRoutes } from "../support/services.ts";
import { sleep } from "../support/wait.ts";

it("while shutting down: the upload in flight completes, and a request after it gets a 503 problem", async () => {
  const clients = createServiceClients(createDirectTransport(inProcessRoutes(testDeps(await testDatabase()))));
  const storageDir = await mkdtemp(join(tmpdir(), "docpipe-shutdown-"));
  const store = new FileStore(storageDir);
  await store.init();
  const app = await buildApp({ clients, store, log: pino({ level: "silent" }), ready: async () => {} });
  const { port } = new URL(await app.listen({ host: "127.0.0.1", port: 0 }));
  const tenant = await createTenant(clients);

  const boundary = "b0undary";
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
    SAMPLES.pdf.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const head =
    `POST /pipes/${tenant.pipeId}/trigger HTTP/1.1\r\nHost: test\r\nX-Api-Key: ${tenant.keyValue}\r\n`
    + `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`;
  const socket = connect(Number(port), "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => socket.on("close", resolve));
  socket.write(head);
  socket.write(body.subarray(0, 20));
  await sleep(200);

  const closed = app.close();
  await sleep(100);
  // The rest of the upload, and a second request pipelined behind it on the same connection.
  socket.write(Buffer.concat([body.subarray(20), Buffer.from("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")]));
  await ended;
  await closed;
  await rm(storageDir, { recursive: true, force: true });

  const [upload, late] = parseResponses(Buffer.concat(chunks));
  expect(upload!.status).toBe(202);
  expect(late!.status).toBe(503);
  expect(late!.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(late!.headers["retry-after"]).toBe("1");
  expect(JSON.parse(late!.body.toString())).toMatchObject({ status: 503, code: "service_unavailable" });
});

it("at SHUTDOWN_TIMEOUT_MS an upload still in flight is cut, its staged file removed, and close() resolves", async () => {
  const deps = testDeps(await testDatabase(), { SHUTDOWN_TIMEOUT_MS: "300" });
  const clients = createServiceClients(createDirectTransport(inProcessRoutes(deps)));
  const storageDir = await mkdtemp(join(tmpdir(), "docpipe-shutdown-"));
  const store = new FileStore(storageDir);
  await store.init();
  const app = await buildApp({ clients, store, log: pino({ level: "silent" }), ready: async () => {}, settings: deps.config });
  const { port } = new URL(await app.listen({ host: "127.0.0.1", port: 0 }));
  const tenant = await createTenant(clients, { maxSizeMb: 10 });

  // A slow client: the head of a 1 MB upload, then 1 KB every 20 ms (about 50 KB/s).
  const boundary = "b0undary";
  const head =
    `POST /pipes/${tenant.pipeId}/trigger HTTP/1.1\r\nHost: test\r\nX-Api-Key: ${tenant.keyValue}\r\n`
    + `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${1024 * 1024}\r\n\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  const socket = connect(Number(port), "127.0.0.1");
  socket.on("error", () => {});
  const ended = new Promise((resolve) => socket.on("close", resolve));
  socket.write(head);
  socket.write(SAMPLES.pdf.bytes);
  const drip = setInterval(() => socket.writable && socket.write(Buffer.alloc(1024, 0x20)), 20);
  await sleep(300);
  expect(await storedFiles(store)).toHaveLength(1);

  const started = performance.now();
  await app.close();
  const took = performance.now() - started;
  clearInterval(drip);
  await ended;
  expect(took).toBeGreaterThanOrEqual(250);
  expect(took).toBeLessThan(3000);
  expect(await storedFiles(store)).toEqual([]);
  await rm(storageDir, { recursive: true, force: true });
});
