/**
 * Hostile traffic: file names, part headers and request headers carrying NUL, control characters or
 * lone surrogates. Each gets its documented problem and leaves nothing behind; none is a 5xx.
 */
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createServiceClients } from "../../src/api/clients.ts";
import { createDirectTransport } from "../../src/api/direct-transport.ts";
import { buildApp } from "../../src/inbound/http/app.ts";
import { generateKeyValue } from "../../src/platform/keys/key-value.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { SAMPLES } from "../formats/fixtures.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { createTenant, type EdgeHarness, startEdge, storedFiles, type Tenant } from "../support/edge.ts";
import { parseResponses, sendRaw } from "../support/raw-http.ts";
import { inProcessRoutes } from "../support/services.ts";

let edge: EdgeHarness;
let tenant: Tenant;
beforeAll(async () => {
  edge = await startEdge();
  tenant = await createTenant(edge.clients);
  return () => edge.close();
});

const BOUNDARY = "h0stile";

/** A multipart body with one file part whose Content-Disposition and Content-Type are given raw. */
function multipart(disposition: string, contentType = "application/pdf", bytes: Uint8Array = SAMPLES.pdf.bytes): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${contentType}\r\n\r\n`, "latin1"),
    bytes,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

async function post(body: Buffer, headers: Record<string, string> = {}) {
  const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/trigger`, {
    method: "POST",
    headers: { "x-api-key": tenant.keyValue, "content-type": `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text) };
}

function expectProblem(result: { status: number; headers: Headers; body: { traceId?: string } }, status: number, code: string) {
  expect(result.status).toBe(status);
  expect(result.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(result.body).toMatchObject({ type: `https://docpipe.dev/problems/${code}`, status, code });
  expect(result.body.traceId).toBe(result.headers.get("x-request-id"));
}

describe("file names with NUL or control characters: 400 file_name_invalid, nothing stored", () => {
  it.each([
    ["NUL, percent-encoded (RFC 5987)", `form-data; name="file"; filename*=UTF-8''a%00b.pdf`],
    ["NUL, raw", `form-data; name="file"; filename="a\u0000b.pdf"`],
    ["tab, raw", `form-data; name="file"; filename="a\tb.pdf"`],
    ["escape, raw", `form-data; name="file"; filename="a\u001bb.pdf"`],
    ["DEL, percent-encoded", `form-data; name="file"; filename*=UTF-8''a%7Fb.pdf`],
    ["C1 control (U+0085), percent-encoded", `form-data; name="file"; filename*=UTF-8''a%C2%85b.pdf`],
    ["line separator U+2028, percent-encoded", `form-data; name="file"; filename*=UTF-8''a%E2%80%A8b.pdf`],
  ])("%s", async (_name, disposition) => {
    const before = await storedFiles(edge.store);
    const result = await post(multipart(disposition));
    expectProblem(result, 400, "file_name_invalid");
    expect(await storedFiles(edge.store)).toEqual(before);
  });

  it.each([
    ["carriage return", "%0D"],
    ["line feed", "%0A"],
  ])("a file name with a %s: the multipart parser skips the part, so 400 file_missing, nothing stored", async (_name, percentEscape) => {
    const before = await storedFiles(edge.store);
    const result = await post(multipart(`form-data; name="file"; filename*=UTF-8''a${percentEscape}b.pdf`));
    expectProblem(result, 400, "file_missing");
    expect(await storedFiles(edge.store)).toEqual(before);
  });

  it.each([
    ["..", `form-data; name="file"; filename=".."`],
    [".", `form-data; name="file"; filename="."`],
    ["a folder alone", `form-data; name="file"; filename="reports/"`],
    ["a Windows path to a parent", `form-data; name="file"; filename="C:\\docs\\.."`],
  ])("a file name that is no name once its folders are dropped (%s): 400 file_name_invalid, nothing stored", async (_name, disposition) => {
    const before = await storedFiles(edge.store);
    const result = await post(multipart(disposition));
    expectProblem(result, 400, "file_name_invalid");
    expect(await storedFiles(edge.store)).toEqual(before);
  });

  it.each([
    ["256 ASCII characters", `form-data; name="file"; filename="${"a".repeat(252)}.pdf"`],
    ["86 three-byte characters (258 bytes in UTF-8)", `form-data; name="file"; filename*=UTF-8''${"%E2%82%AC".repeat(86)}`],
    // Past the multipart parser's header limit (about 80 KB) the name was cut short and stored so.
    ["100,000 characters", `form-data; name="file"; filename="${"c".repeat(100_000)}.pdf"`],
  ])("a file name longer than 255 bytes in UTF-8 (%s): 400 file_name_invalid, nothing stored", async (_name, disposition) => {
    const before = await storedFiles(edge.store);
    const result = await post(multipart(disposition));
    expectProblem(result, 400, "file_name_invalid");
    expect(result.body.detail).toMatch(/^the file name is \d+ bytes long in UTF-8; at most 255 are taken/);
    expect(await storedFiles(edge.store)).toEqual(before);
  });

  it("a file name of 255 bytes in UTF-8 is taken whole", async () => {
    const name = `${"\u00e9".repeat(125)}x.pdf`;
    expect(Buffer.byteLength(name)).toBe(255);
    const result = await post(multipart(`form-data; name="file"; filename*=UTF-8''${encodeURIComponent(name)}`));
    expect(result.status).toBe(202);
    expect(result.body.file.name).toBe(name);
  });

  it("a file name's folders are dropped: the name is its last part", async () => {
    const result = await post(multipart(`form-data; name="file"; filename="../reports/q3.pdf"`));
    expect(result.status).toBe(202);
    expect(result.body.file.name).toBe("q3.pdf");
  });

  it("bytes that are not UTF-8 (a lone surrogate's encoding) arrive as U+FFFD, never as a lone surrogate", async () => {
    const result = await post(multipart(`form-data; name="file"; filename*=UTF-8''a%ED%A0%80b.pdf`));
    expect(result.status).toBe(202);
    expect(result.body.file.name).toBe("a\uFFFD\uFFFD\uFFFDb.pdf");
  });

  it("a name with spaces, accents and emoji is accepted as sent", async () => {
    const result = await post(multipart(`form-data; name="file"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%F0%9F%93%84.pdf`));
    expect(result.status).toBe(202);
    expect(result.body.file.name).toBe("résumé 📄.pdf");
  });
});

describe("control characters elsewhere in the part never make a 5xx", () => {
  it("a NUL in the part's Content-Type: 400 multipart_malformed, nothing stored", async () => {
    const before = await storedFiles(edge.store);
    const result = await post(multipart(`form-data; name="file"; filename="a.pdf"`, "application/pdf\u0000x"));
    expectProblem(result, 400, "multipart_malformed");
    expect(await storedFiles(edge.store)).toEqual(before);
  });

  it("a NUL in the part's name: 400 file_part_unexpected", async () => {
    const result = await post(multipart(`form-data; name="fi\u0000le"; filename="a.pdf"`));
    expectProblem(result, 400, "file_part_unexpected");
  });

  it("a file part without a name: 400 file_part_unexpected (it was a 500), nothing stored", async () => {
    const before = await storedFiles(edge.store);
    const result = await post(multipart(`form-data; filename="a.pdf"`));
    expectProblem(result, 400, "file_part_unexpected");
    expect(result.body.detail).toBe('file parts must be named "file", got a part without a name');
    expect(await storedFiles(edge.store)).toEqual(before);
  });
});

describe("multipart bodies that were answered with a 500", () => {
  it("a part named file of type application/octet-stream without a file name: 400 file_missing, nothing stored", async () => {
    const before = await storedFiles(edge.store);
    const result = await post(multipart('form-data; name="file"', "application/octet-stream"));
    expectProblem(result, 400, "file_missing");
    expect(result.body.detail).toBe('the part "file" has no file name; send it as a file (curl -F "file=@document.pdf")');
    expect(await storedFiles(edge.store)).toEqual(before);
  });

  it("a boundary longer than 252 bytes: 400 multipart_malformed", async () => {
    const boundary = "b".repeat(253);
    const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhi\r\n--${boundary}--\r\n`);
    const result = await post(body, { "content-type": `multipart/form-data; boundary=${boundary}` });
    expectProblem(result, 400, "multipart_malformed");
    expect(result.body.detail).toBe("the multipart body could not be read: the Content-Type has no boundary of 1 to 252 bytes");
  });
});

describe("bytes after the closing delimiter (an epilogue)", () => {
  it("are read and dropped: the connection answers its next request", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    onTestFinished(() => agent.destroy());
    const epilogue = Buffer.alloc(70_000, "e");
    const form = multipart('form-data; name="file"; filename="a.pdf"');
    /** Posts `first`, then (100 ms later, so it arrives in later reads) `later`, on the agent's one connection. */
    const postOn = (first: Buffer, later: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const sent = request(`${edge.url}/pipes/${tenant.pipeId}/trigger`, {
          method: "POST",
          agent,
          headers: { "x-api-key": tenant.keyValue, "content-type": `multipart/form-data; boundary=${BOUNDARY}`, "content-length": first.length + later.length },
          signal: AbortSignal.timeout(10_000),
        });
        sent.on("response", (response) => {
          response.resume();
          response.on("end", () => resolve(response.statusCode!));
        });
        sent.on("error", reject);
        sent.write(first);
        setTimeout(() => sent.end(later), 100);
      });
    expect(await postOn(form, epilogue)).toBe(202);
    expect(await postOn(form, Buffer.alloc(0))).toBe(202);
  });
});

describe("a request whose body ends before it is read", () => {
  /** Sends a request's head and the start of its body on a raw socket, then half-closes it; after a moment, closes it. */
  async function cutShort(idempotencyKey: string) {
    const { hostname, port } = new URL(edge.url);
    const socket = connect(Number(port), hostname);
    socket.on("error", () => {});
    const part = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n`;
    socket.end(
      `POST /pipes/${tenant.pipeId}/trigger HTTP/1.1\r\nHost: t\r\nX-Api-Key: ${tenant.keyValue}\r\nIdempotency-Key: ${idempotencyKey}\r\n`
        + `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 900000\r\n\r\n${part}`,
    );
    await Promise.race([once(socket, "close"), new Promise((resolve) => setTimeout(resolve, 1500))]);
    socket.destroy();
  }

  it("is let go: the same Idempotency-Key is free again at once (the handler waited for the body for ever, holding it and the shutdown)", async () => {
    await cutShort("cut-short-1");
    // The key's claim is given up as the handler fails (before: 409 idempotency_key_in_flight for the key's 16-minute lease).
    let result: Awaited<ReturnType<typeof post>> | undefined;
    for (let tries = 0; tries < 50; tries++) {
      result = await post(multipart(`form-data; name="file"; filename="a.pdf"`), { "idempotency-key": "cut-short-1" });
      if (result.status !== 409) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(result!.status).toBe(202);
  });
});

describe("a repeated Idempotency-Key header", () => {
  it("is 400 idempotency_key_invalid: Node joins the two into one key of their own", async () => {
    const body = multipart(`form-data; name="file"; filename="a.pdf"`);
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const outgoing = request(`${edge.url}/pipes/${tenant.pipeId}/trigger`, {
        method: "POST",
        headers: { "x-api-key": tenant.keyValue, "content-type": `multipart/form-data; boundary=${BOUNDARY}`, "idempotency-key": ["k1", "k2"] },
      });
      outgoing.on("response", async (response) => {
        let text = "";
        for await (const chunk of response) text += chunk;
        resolve({ status: response.statusCode!, text });
      });
      outgoing.on("error", reject);
      outgoing.end(body);
    });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ code: "idempotency_key_invalid", detail: "send one Idempotency-Key header" });
  });
});

describe("NUL and lone surrogates in request headers", () => {
  it("a NUL in a header value is refused by the HTTP parser with a 400 problem", async () => {
    const raw = Buffer.from(`POST /pipes/${tenant.pipeId}/trigger HTTP/1.1\r\nHost: t\r\nX-Api-Key: dp_\u0000x\r\nContent-Length: 0\r\n\r\n`, "latin1");
    const [answer] = parseResponses(await sendRaw(edge.url, raw));
    expect(answer!.status).toBe(400);
    expect(answer!.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(answer!.body.toString())).toMatchObject({ status: 400, code: "bad_request" });
  });

  it.each([
    ["x-api-key", "dp_\xed\xa0\x80"],
    ["x-workspace-id", "\xed\xa0\x80"],
    ["idempotency-key", "k\xed\xa0\x80"],
    ["origin", "http://\xed\xa0\x80.example"],
  ])("a lone surrogate's UTF-8 bytes in %s: a 4xx problem, never a 5xx", async (name, value) => {
    const body = multipart(`form-data; name="file"; filename="a.pdf"`);
    const headers = { "x-api-key": tenant.keyValue, [name]: value };
    const raw = Buffer.concat([
      Buffer.from(
        `POST /pipes/${tenant.pipeId}/trigger HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n`
          + Object.entries(headers)
            .map(([key, text]) => `${key}: ${text}\r\n`)
            .join("")
          + `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        "latin1",
      ),
      body,
    ]);
    const [answer] = parseResponses(await sendRaw(edge.url, raw));
    expect(answer!.status).toBeGreaterThanOrEqual(400);
    expect(answer!.status).toBeLessThan(500);
    expect(answer!.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });
});

/** The edge over services whose database counts key lookups by digest. */
async function edgeCountingKeyLookups(env: Record<string, string> = {}) {
  const lookups = { count: 0 };
  const db = (await testDatabase()).withPlugin({
    transformQuery(args) {
      if (args.node.kind === "SelectQueryNode" && JSON.stringify(args.node).includes('"digest"')) lookups.count++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  const deps = testDeps(db, env);
  const clients = createServiceClients(createDirectTransport(inProcessRoutes(deps)));
  const store = new FileStore(await mkdtemp(join(tmpdir(), "docpipe-hostile-")));
  await store.init();
  const app = await buildApp({ clients, store, log: pino({ level: "silent" }), ready: async () => {}, settings: deps.config });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  // Called within a test: closed when it ends.
  onTestFinished(async () => {
    await app.close();
    await rm(store.root, { recursive: true, force: true });
  });
  return { url, clients, lookups };
}

async function trigger(url: string, pipeId: string, key: string | undefined, headers: Record<string, string> = {}) {
  const body = new FormData();
  body.append("file", new Blob([SAMPLES.pdf.bytes], { type: "application/pdf" }), "a.pdf");
  const response = await fetch(`${url}/pipes/${pipeId}/trigger`, {
    method: "POST",
    headers: { ...(key === undefined ? {} : { "x-api-key": key }), ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text) };
}

describe("failed authentications are limited per client address (AUTH_FAILURES_PER_MINUTE, default 60)", () => {
  it("120 requests with one minted key in a burst: 60 get 401, the rest 429 with Retry-After; a valid key still passes; the database is asked once", async () => {
    const edge = await edgeCountingKeyLookups();
    const tenant = await createTenant(edge.clients);
    const minted = generateKeyValue("dp");
    const lookupsBefore = edge.lookups.count;
    const results = await Promise.all(Array.from({ length: 120 }, () => trigger(edge.url, tenant.pipeId, minted)));

    const refused = results.filter((result) => result.status === 401);
    const limited = results.filter((result) => result.status === 429);
    expect(refused).toHaveLength(60);
    expect(limited).toHaveLength(60);
    for (const result of refused) expectProblem(result, 401, "api_key_invalid");
    for (const result of limited) {
      expectProblem(result, 429, "too_many_failed_authentications");
      const retryAfter = Number(result.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Not a key's rate limit: no RateLimit-* headers.
      expect(result.headers.get("ratelimit-limit")).toBeNull();
    }
    // Repeated unknown digests are answered from memory, in a burst and afterwards.
    expect(edge.lookups.count - lookupsBefore).toBe(1);
    for (let i = 0; i < 5; i++) expect((await trigger(edge.url, tenant.pipeId, minted)).status).toBe(429);
    expect(edge.lookups.count - lookupsBefore).toBe(1);

    const valid = await trigger(edge.url, tenant.pipeId, tenant.keyValue);
    expect(valid.status).toBe(202);
    // Missing and malformed keys count as failures too.
    expectProblem(await trigger(edge.url, tenant.pipeId, undefined), 429, "too_many_failed_authentications");
    expectProblem(await trigger(edge.url, tenant.pipeId, "dp_not-a-key"), 429, "too_many_failed_authentications");
  });

  it("without TRUST_PROXY, X-Forwarded-For is not believed: changing it does not escape the limit", async () => {
    const edge = await edgeCountingKeyLookups({ AUTH_FAILURES_PER_MINUTE: "3" });
    const tenant = await createTenant(edge.clients);
    for (let i = 0; i < 3; i++) expect((await trigger(edge.url, tenant.pipeId, "dp_bad", { "x-forwarded-for": `203.0.113.${i}` })).status).toBe(401);
    expectProblem(await trigger(edge.url, tenant.pipeId, "dp_bad", { "x-forwarded-for": "198.51.100.9" }), 429, "too_many_failed_authentications");
  });

  it("with TRUST_PROXY, each forwarded client address (IPv6 by its /64) counts apart", async () => {
    const edge = await edgeCountingKeyLookups({ AUTH_FAILURES_PER_MINUTE: "3", TRUST_PROXY: "127.0.0.1" });
    const tenant = await createTenant(edge.clients);
    const from = (address: string) => trigger(edge.url, tenant.pipeId, "dp_bad", { "x-forwarded-for": address });
    for (let i = 0; i < 3; i++) expect((await from("203.0.113.7")).status).toBe(401);
    expectProblem(await from("203.0.113.7"), 429, "too_many_failed_authentications");
    expectProblem(await from("203.0.113.8"), 401, "api_key_invalid");
    expect((await trigger(edge.url, tenant.pipeId, tenant.keyValue, { "x-forwarded-for": "203.0.113.7" })).status).toBe(202);

    for (let i = 0; i < 3; i++) expect((await from(`2001:db8::${i + 1}`)).status).toBe(401);
    expectProblem(await from("2001:db8::ffff"), 429, "too_many_failed_authentications");
    expectProblem(await from("2001:db8:0:1::1"), 401, "api_key_invalid");
  });

  it("with TRUST_PROXY as a hop count, the address that many hops back counts", async () => {
    const edge = await edgeCountingKeyLookups({ AUTH_FAILURES_PER_MINUTE: "2", TRUST_PROXY: "1" });
    const tenant = await createTenant(edge.clients);
    // One proxy: the last X-Forwarded-For entry is the client; what the client wrote before it is not believed.
    const from = (chain: string) => trigger(edge.url, tenant.pipeId, "dp_bad", { "x-forwarded-for": chain });
    expect((await from("192.0.2.1, 203.0.113.20")).status).toBe(401);
    expect((await from("192.0.2.2, 203.0.113.20")).status).toBe(401);
    expectProblem(await from("192.0.2.3, 203.0.113.20"), 429, "too_many_failed_authentications");
    expectProblem(await from("203.0.113.21"), 401, "api_key_invalid");
  });

  it("with TRUST_PROXY as a hop count, a chain shorter than the hops is the client's own: the connection's address counts", async () => {
    const edge = await edgeCountingKeyLookups({ AUTH_FAILURES_PER_MINUTE: "2", TRUST_PROXY: "2" });
    const tenant = await createTenant(edge.clients);
    // Two proxies would have written two entries; one entry came from the client itself.
    const from = (chain: string) => trigger(edge.url, tenant.pipeId, "dp_bad", { "x-forwarded-for": chain });
    expect((await from("203.0.113.30")).status).toBe(401);
    expect((await from("203.0.113.31")).status).toBe(401);
    expectProblem(await from("203.0.113.32"), 429, "too_many_failed_authentications");
    expectProblem(await trigger(edge.url, tenant.pipeId, "dp_bad"), 429, "too_many_failed_authentications");
    // A full chain names the client two hops back.
    expectProblem(await from("198.51.100.1, 203.0.113.33, 10.0.0.1"), 401, "api_key_invalid");
  });

  it("with TRUST_PROXY as a hop count, an entry that is not an IP address is never a client of its own", async () => {
    const edge = await edgeCountingKeyLookups({ AUTH_FAILURES_PER_MINUTE: "2", TRUST_PROXY: "1" });
    const tenant = await createTenant(edge.clients);
    const from = (chain: string) => trigger(edge.url, tenant.pipeId, "dp_bad", { "x-forwarded-for": chain });
    expect((await from("invented-1")).status).toBe(401);
    expect((await from("203.0.113.40, invented-2")).status).toBe(401);
    expectProblem(await from(`invented-${"x".repeat(4000)}`), 429, "too_many_failed_authentications");
    expectProblem(await trigger(edge.url, tenant.pipeId, "dp_bad"), 429, "too_many_failed_authentications");
  });

  it("AUTH_FAILURES_PER_MINUTE=0 turns the limit off", async () => {
    const edge = await edgeCountingKeyLookups({ AUTH_FAILURES_PER_MINUTE: "0" });
    const tenant = await createTenant(edge.clients);
    for (let i = 0; i < 5; i++) expect((await trigger(edge.url, tenant.pipeId, "dp_bad")).status).toBe(401);
  });
});
