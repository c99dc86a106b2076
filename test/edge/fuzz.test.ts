/**
 * Property tests: random methods, paths, headers and multipart bodies thrown at the whole edge over
 * a real socket. Whatever arrives, the edge never answers 5xx, every 4xx is a problem document, and
 * every 202 has its run.
 */
import { request as httpRequest } from "node:http";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { PROBLEM_TYPE_BASE, PROBLEMS, type ProblemCode } from "../../src/inbound/http/problems.ts";
import { isPrintable } from "../../src/documents/formats/file-names.ts";
import { SAMPLES } from "../formats/fixtures.ts";
import { createTenant, type EdgeHarness, startEdge, type Tenant } from "../support/edge.ts";
import { type Answer, parseResponses, sendRaw } from "../support/raw-http.ts";

// Fixed so CI replays the same cases; FUZZ_SEED and FUZZ_RUNS explore further on a workstation.
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 250);
const RAW_NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 120);
const ALLOWED_ORIGIN = "http://allowed.example";

let edge: EdgeHarness;
let tenant: Tenant;
beforeAll(async () => {
  edge = await startEdge();
  tenant = await createTenant(edge.clients, { allowedOrigins: [ALLOWED_ORIGIN], acceptedFormats: ["pdf", "png", "txt"] });
  return edge.close;
});

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: Uint8Array | undefined;
}

// --- Arbitraries --------------------------------------------------------------------------------

const charsOf = (...ranges: [number, number][]) => fc.oneof(...ranges.map(([min, max]) => fc.integer({ min, max }))).map((code) => String.fromCharCode(code));

/** Any byte Node's client lets through in a header value: printable ASCII, tab and Latin-1. */
const headerChar = charsOf([0x20, 0x7e], [0x09, 0x09], [0x80, 0xff]);
const headerText = (maxLength: number) => fc.string({ unit: headerChar, maxLength });
/** Any byte Node's client lets through in a path. */
const pathChar = charsOf([0x21, 0x7e], [0x80, 0xff]);
const token = fc.string({ unit: charsOf([0x61, 0x7a], [0x30, 0x39], [0x2d, 0x2d]), minLength: 1, maxLength: 12 });
/**
 * What slipped through before: NUL, other C0 controls, DEL, C1 controls, line breaks, and the UTF-8
 * form of lone surrogates (U+D800, U+DFFF), as the Latin-1 characters of their bytes.
 */
const hostileChar = fc.constantFrom("\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9b", "\r", "\n", "\xed\xa0\x80", "\xed\xbf\xbf");
const hostileText = (maxLength: number) => fc.array(fc.oneof(headerChar, hostileChar), { minLength: 1, maxLength }).map((units) => units.join(""));
/** An RFC 5987 `filename*` value whose escapes decode to NUL, controls, separators or a lone surrogate's bytes. */
const hostileFileNameStar = fc
  .array(fc.oneof(fc.constantFrom("%00", "%01", "%1B", "%7F", "%C2%85", "%ED%A0%80", "%E2%80%A8", "%0D", "%0A", "%09"), token), { minLength: 1, maxLength: 6 })
  .map((pieces) => `UTF-8''${pieces.join("")}.pdf`);

const pathSegment = fc.oneof(
  fc.constantFrom(
    "pipes",
    "trigger",
    "http-trigger",
    "..",
    ".",
    "",
    "%2e%2e",
    "%2F",
    "%00",
    "%ZZ",
    "%",
    "%c3%a9",
    "%ff",
    "%ed%a0%80",
    "%1b",
    "openapi.json",
    "docs",
    "healthz",
    "readyz",
  ),
  fc.string({ unit: pathChar, maxLength: 20 }),
  // Long segments (a pipeId of any length must still reach the checks).
  fc.string({ unit: pathChar, minLength: 101, maxLength: 300 }),
);

function pathArbitrary(pipeId: string) {
  const pipe = fc.oneof(fc.constant(pipeId), fc.constant(pipeId.toUpperCase()), fc.uuid(), pathSegment, fc.constant(encodeURIComponent(pipeId)));
  const trigger = fc.oneof(fc.constantFrom("trigger", "http-trigger", "trigger/", "TRIGGER", "trigger/extra", "%74rigger"), pathSegment);
  const query = fc.oneof(
    fc.constant(""),
    fc.string({ unit: pathChar, maxLength: 30 }).map((text) => `?${text}`),
  );
  const structured = fc.tuple(pipe, trigger, query).map(([p, t, q]) => `/pipes/${p}/${t}${q}`);
  const free = fc.array(pathSegment, { maxLength: 6 }).map((segments) => `/${segments.join("/")}`);
  const doubled = structured.map((path) => `/${path}`);
  return fc.oneof({ weight: 4, arbitrary: structured }, { weight: 2, arbitrary: free }, { weight: 1, arbitrary: doubled });
}

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constant("POST") },
  { weight: 3, arbitrary: fc.constantFrom("GET", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD") },
  { weight: 1, arbitrary: fc.constantFrom("PROPFIND", "QUERY", "SEARCH", "TRACE", "LOCK", "PURGE") },
);

const sampleFiles = Object.values(SAMPLES);

interface PartSpec {
  name: string;
  fileName: string | undefined;
  /** Sent as `filename*=` (RFC 5987) instead of `filename=`. */
  fileNameStar?: string | undefined;
  contentType: string | undefined;
  bytes: Uint8Array;
}

/** A text sample with NUL, controls or a lone surrogate's bytes inside. */
const hostileTextBytes = fc
  .tuple(fc.string({ maxLength: 40 }), hostileText(8), fc.string({ maxLength: 40 }))
  .map(([before, bad, after]) => Buffer.from(before + bad + after, "latin1"));

const partArbitrary: fc.Arbitrary<PartSpec> = fc.record({
  name: fc.oneof({ weight: 3, arbitrary: fc.constant("file") }, { weight: 1, arbitrary: headerText(20) }, { weight: 1, arbitrary: hostileText(20) }),
  fileName: fc.option(fc.oneof(fc.constantFrom("a.pdf", "x.png", "notes.txt", "../../etc/passwd", "", 'a"b.pdf'), headerText(40), hostileText(40)), {
    nil: undefined,
  }),
  fileNameStar: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileFileNameStar }),
  contentType: fc.option(fc.oneof(fc.constantFrom("application/pdf", "image/png", "text/plain", "application/octet-stream"), headerText(40), hostileText(40)), {
    nil: undefined,
  }),
  bytes: fc.oneof(fc.constantFrom(...sampleFiles.map((sample) => sample.bytes)), fc.uint8Array({ maxLength: 2048 }), hostileTextBytes),
});

const boundaryArbitrary = fc.string({
  unit: charsOf([0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a], [0x27, 0x2f], [0x3a, 0x3a], [0x3d, 0x3d], [0x3f, 0x3f], [0x5f, 0x5f]),
  minLength: 1,
  maxLength: 70,
});

function encodeMultipart(boundary: string, parts: readonly PartSpec[], lineEnding: string): Uint8Array {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const fileName = part.fileNameStar !== undefined ? `; filename*=${part.fileNameStar}` : part.fileName === undefined ? "" : `; filename="${part.fileName}"`;
    const type = part.contentType === undefined ? "" : `${lineEnding}Content-Type: ${part.contentType}`;
    chunks.push(
      Buffer.from(`--${boundary}${lineEnding}Content-Disposition: form-data; name="${part.name}"${fileName}${type}${lineEnding}${lineEnding}`, "latin1"),
    );
    chunks.push(Buffer.from(part.bytes), Buffer.from(lineEnding));
  }
  chunks.push(Buffer.from(`--${boundary}--${lineEnding}`));
  return Buffer.concat(chunks);
}

interface BodySpec {
  contentType: string | undefined;
  bytes: Uint8Array | undefined;
}

/** A multipart body with random boundary, parts, line endings, truncation and declared boundary. */
const randomMultipart: fc.Arbitrary<BodySpec> = fc
  .record({
    boundary: boundaryArbitrary,
    declared: fc.option(boundaryArbitrary, { nil: undefined }),
    parts: fc.array(partArbitrary, { maxLength: 40, size: "small" }),
    lineEnding: fc.constantFrom("\r\n", "\r\n", "\n"),
    truncateAt: fc.option(fc.nat(), { nil: undefined }),
  })
  .map(({ boundary, declared, parts, lineEnding, truncateAt }) => {
    const bytes = encodeMultipart(boundary, parts, lineEnding);
    return {
      contentType: `multipart/form-data; boundary=${declared ?? boundary}`,
      bytes: truncateAt === undefined ? bytes : bytes.subarray(0, truncateAt % (bytes.length + 1)),
    };
  });

/** One file part named "file" whose name, Content-Type or bytes carry NUL, controls or a lone surrogate's bytes. */
const hostileFilePart = fc
  .record({
    boundary: boundaryArbitrary,
    sample: fc.constantFrom(SAMPLES.pdf, SAMPLES.txt),
    fileName: fc.oneof(
      hostileText(30).map((name) => ({ fileName: `${name}.txt` })),
      hostileFileNameStar.map((star) => ({ fileName: undefined, fileNameStar: star })),
    ),
    contentType: fc.oneof(fc.constant(undefined), hostileText(30)),
    bytes: fc.option(hostileTextBytes, { nil: undefined }),
  })
  .map(({ boundary, sample, fileName, contentType, bytes }) => ({
    contentType: `multipart/form-data; boundary=${boundary}`,
    bytes: encodeMultipart(boundary, [{ name: "file", ...fileName, contentType: contentType ?? sample.contentType, bytes: bytes ?? sample.bytes }], "\r\n"),
  }));

/** A well-formed submission of one sample file (the pipe refuses the GIF), so a good share of the runs is accepted. */
const validMultipart: fc.Arbitrary<BodySpec> = fc
  .record({ boundary: boundaryArbitrary, sample: fc.constantFrom(SAMPLES.pdf, SAMPLES.png, SAMPLES.txt, SAMPLES.gif) })
  .map(({ boundary, sample }) => ({
    contentType: `multipart/form-data; boundary=${boundary}`,
    bytes: encodeMultipart(boundary, [{ name: "file", fileName: sample.fileName, contentType: sample.contentType, bytes: sample.bytes }], "\r\n"),
  }));

const bodyArbitrary: fc.Arbitrary<BodySpec> = fc.oneof(
  { weight: 3, arbitrary: validMultipart },
  { weight: 4, arbitrary: randomMultipart },
  { weight: 2, arbitrary: hostileFilePart },
  { weight: 1, arbitrary: fc.constant({ contentType: undefined, bytes: undefined }) },
  { weight: 1, arbitrary: fc.record({ contentType: fc.option(headerText(60), { nil: undefined }), bytes: fc.uint8Array({ maxLength: 4096 }) }) },
);

/** Header values near Node's 16 KiB limit for the whole header section: one per request. */
const hugeValue = fc
  .tuple(fc.constantFrom("a", "dp_", "%", "\xff", "-"), fc.integer({ min: 1_000, max: 12_000 }))
  .map(([unit, length]) => unit.repeat(length).slice(0, length));
const junk = headerText(80);

type HeaderValue = string | string[];

/** For each header the edge reads, values from right to garbage. */
function headerValues(tenant: Tenant): Record<string, fc.Arbitrary<HeaderValue>> {
  return {
    "x-api-key": fc.oneof(
      { weight: 5, arbitrary: fc.constant<HeaderValue>(tenant.keyValue) },
      { weight: 1, arbitrary: fc.constant<HeaderValue>([tenant.keyValue, tenant.keyValue]) },
      { weight: 1, arbitrary: fc.constant(`${tenant.keyValue.slice(0, -1)}x`) },
      {
        weight: 1,
        arbitrary: fc.string({ unit: charsOf([0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]), minLength: 36, maxLength: 36 }).map((rest) => `dp_${rest}`),
      },
      { weight: 2, arbitrary: junk },
    ),
    "x-workspace-id": fc.oneof(fc.constant(tenant.defaultWorkspaceId), fc.uuid(), junk),
    "idempotency-key": fc.oneof(token, junk, fc.string({ unit: headerChar, minLength: 256, maxLength: 300 })),
    origin: fc.oneof(fc.constant(ALLOWED_ORIGIN), fc.constant("null"), fc.constant("http://evil.example"), junk),
    "content-type": fc.oneof(
      junk,
      fc.constantFrom("multipart/form-data", "multipart/form-data; boundary=", "multipart/mixed; boundary=x", "application/json", "text/plain"),
    ),
    "x-request-id": junk,
    "x-other": junk,
  };
}

/** Node's client leaves Content-Length out for GET, HEAD, DELETE, OPTIONS and TRACE, which would send the body as a second, garbage request. */
function framed(request: FuzzRequest): FuzzRequest {
  if (request.body === undefined) return request;
  return { ...request, headers: { ...request.headers, "content-length": String(request.body.length) } };
}

/** A submission that should be accepted: POST, a trigger path, the tenant's key, a sample file (or one with a hostile name, type or bytes). */
function wellFormedRequest(tenant: Tenant): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      path: fc.constantFrom("trigger", "http-trigger", "trigger/", "trigger?source=fuzz").map((tail) => `/pipes/${tenant.pipeId}/${tail}`),
      workspaceId: fc.option(fc.constant(tenant.defaultWorkspaceId), { nil: undefined }),
      origin: fc.option(fc.constant(ALLOWED_ORIGIN), { nil: undefined }),
      idempotencyKey: fc.option(token, { nil: undefined }),
      body: fc.oneof({ weight: 3, arbitrary: validMultipart }, { weight: 1, arbitrary: hostileFilePart }),
    })
    .map(({ path, workspaceId, origin, idempotencyKey, body }) => {
      const headers = {
        "x-api-key": tenant.keyValue,
        "x-workspace-id": workspaceId,
        origin,
        "idempotency-key": idempotencyKey,
        "content-type": body.contentType,
      };
      return { method: "POST", path, headers: definedOnly(headers), body: body.bytes };
    });
}

function definedOnly(headers: Record<string, HeaderValue | undefined>): Record<string, HeaderValue> {
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, HeaderValue] => entry[1] !== undefined));
}

/** A well-formed submission with one thing changed: the method, the path, one header or the body. */
function mutatedRequest(tenant: Tenant): fc.Arbitrary<FuzzRequest> {
  const values = headerValues(tenant);
  const mutation: fc.Arbitrary<(request: FuzzRequest) => FuzzRequest> = fc.oneof(
    method.map((value) => (request: FuzzRequest) => ({ ...request, method: value })),
    pathArbitrary(tenant.pipeId).map((path) => (request: FuzzRequest) => ({ ...request, path })),
    fc
      .constantFrom(...Object.keys(values))
      .chain((name) => fc.tuple(fc.constant(name), fc.oneof(values[name]!, hugeValue)))
      .map(([name, value]) => (request: FuzzRequest) => ({ ...request, headers: { ...request.headers, [name]: value } })),
    fc
      .constantFrom(...Object.keys(values))
      .map((name) => (request: FuzzRequest) => ({ ...request, headers: definedOnly({ ...request.headers, [name]: undefined }) })),
    bodyArbitrary.map((body) => (request: FuzzRequest) => ({ ...request, body: body.bytes })),
  );
  return fc.tuple(wellFormedRequest(tenant), mutation).map(([request, mutate]) => mutate(request));
}

/** Everything random: method, path, any subset of the headers (one possibly huge) and body. */
function randomRequest(tenant: Tenant): fc.Arbitrary<FuzzRequest> {
  const values = headerValues(tenant);
  const headers = fc.record(Object.fromEntries(Object.entries(values).map(([name, value]) => [name, fc.option(value, { nil: undefined })])));
  const huge = fc.option(fc.tuple(fc.constantFrom(...Object.keys(values)), hugeValue), { nil: undefined });
  return fc.record({ method, path: pathArbitrary(tenant.pipeId), headers, huge, body: bodyArbitrary }).map(({ method, path, headers, huge, body }) => {
    const all: Record<string, HeaderValue | undefined> = { ...headers, "content-type": headers["content-type"] ?? body.contentType };
    if (huge !== undefined) all[huge[0]] = huge[1];
    return { method, path, headers: definedOnly(all), body: body.bytes };
  });
}

function requestArbitrary(tenant: Tenant): fc.Arbitrary<FuzzRequest> {
  return fc
    .oneof(
      { weight: 2, arbitrary: wellFormedRequest(tenant) },
      { weight: 4, arbitrary: mutatedRequest(tenant) },
      { weight: 4, arbitrary: randomRequest(tenant) },
    )
    .map(framed);
}

// --- Sending and checking -----------------------------------------------------------------------

function send(base: string, fuzz: FuzzRequest): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, method: fuzz.method, path: fuzz.path, headers: fuzz.headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on("error", reject);
    });
    request.setTimeout(10_000, () => request.destroy(new Error("no answer within 10 s")));
    request.on("error", reject);
    request.end(fuzz.body);
  });
}

/** The members every problem document has, for a response of `status`. */
function expectProblemDocument(answer: Answer, withBody: boolean) {
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  if (!withBody) return;
  const problem = JSON.parse(answer.body.toString("utf8")) as Record<string, unknown>;
  const code = problem.code as ProblemCode;
  expect(Object.hasOwn(PROBLEMS, code), `known code ${String(code)}`).toBe(true);
  expect(problem).toMatchObject({ type: PROBLEM_TYPE_BASE + code, title: PROBLEMS[code].title, status: answer.status });
  expect(PROBLEMS[code].status).toBe(answer.status);
  expect(typeof problem.detail).toBe("string");
  expect(typeof problem.instance).toBe("string");
  expect(problem.traceId).toBe(answer.headers["x-request-id"]);
}

async function expectRunOf(answer: Answer) {
  const accepted = JSON.parse(answer.body.toString("utf8"));
  const { run } = await edge.clients.runs.getRun({ organizationId: tenant.organizationId, runId: accepted.runId });
  expect(run!.pipeId).toBe(tenant.pipeId);
  expect(run!.file!.sha256).toBe(accepted.file.sha256);
  // An accepted file's name and type hold no control characters and no lone surrogate.
  expect(isPrintable(run!.file!.name), `printable name ${JSON.stringify(run!.file!.name)}`).toBe(true);
  expect(isPrintable(run!.file!.contentType), `printable type ${JSON.stringify(run!.file!.contentType)}`).toBe(true);
}

async function checkAnswer(fuzz: FuzzRequest, answer: Answer) {
  expect(answer.status, "never a 5xx").toBeLessThan(500);
  if (answer.status >= 400) expectProblemDocument(answer, fuzz.method !== "HEAD");
  if (answer.status === 202) await expectRunOf(answer);
}

/** A readable account of a failing request, for fast-check's report. */
function describeRequest(fuzz: FuzzRequest): string {
  const headers = Object.entries(fuzz.headers).map(([name, value]) => `${name}: ${String(value).slice(0, 120)}${String(value).length > 120 ? "…" : ""}`);
  const body =
    fuzz.body === undefined ? "(no body)" : `${fuzz.body.length} bytes: ${JSON.stringify(Buffer.from(fuzz.body.subarray(0, 300)).toString("latin1"))}`;
  return [`${fuzz.method} ${fuzz.path}`, ...headers, body].join("\n");
}

describe("fuzz: random requests over a real socket", () => {
  it(`never a 5xx; every 4xx is a problem document; every 202 has its run (seed ${SEED}, ${NUM_RUNS} runs)`, async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArbitrary(tenant), async (fuzz) => {
        const answer = await send(edge.url, fuzz).catch((error: unknown) => {
          throw new Error(`no answer to\n${describeRequest(fuzz)}\n${String(error)}`);
        });
        seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
        try {
          await checkAnswer(fuzz, answer);
        } catch (error) {
          throw new Error(`${String(error)}\nrequest:\n${describeRequest(fuzz)}\nanswer ${answer.status}: ${answer.body.toString("utf8").slice(0, 500)}`);
        }
      }),
      { seed: SEED, numRuns: NUM_RUNS },
    );
    // The generators reach past the checks: some requests are accepted, and several kinds are refused.
    expect(seen.get(202) ?? 0).toBeGreaterThan(10);
    expect([...seen.keys()].filter((status) => status >= 400).length).toBeGreaterThan(4);
  }, 60_000);
});

// --- Malformed HTTP over a raw socket -----------------------------------------------------------

/** Request lines, header lines and bodies that Node's client would refuse to send. */
function rawRequestArbitrary(tenant: Tenant): fc.Arbitrary<Buffer> {
  const anyByte = charsOf([0x00, 0xff]);
  // Mostly valid request lines, so the header lines and bodies get judged too.
  const method = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom("GET", "POST", "OPTIONS", "DELETE") },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom("CONNECT", "get", "P0ST", "", "GET GET"), fc.string({ unit: headerChar, maxLength: 10 })) },
  );
  const target = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(`/pipes/${tenant.pipeId}/trigger`, "/healthz", "/openapi.json") },
    { weight: 1, arbitrary: fc.constantFrom("*", "/", "http://127.0.0.1/healthz", "//", "/a b", "/\x00", "/%", "healthz", "") },
    { weight: 1, arbitrary: fc.string({ unit: anyByte, maxLength: 40 }) },
  );
  const version = fc.oneof(
    { weight: 3, arbitrary: fc.constant("HTTP/1.1") },
    { weight: 1, arbitrary: fc.constantFrom("HTTP/1.0", "HTTP/2.0", "HTTP/1.1 ", "HTTP/9.9", "HTTP/1.x", "", "http/1.1") },
  );
  const headerLine = fc.oneof(
    fc.constantFrom(
      "Host: a",
      `X-Api-Key: ${tenant.keyValue}`,
      "Content-Length: 5",
      "Content-Length: -1",
      "Content-Length: 99999999999999999999",
      "Content-Length: 1, 2",
      "Transfer-Encoding: chunked",
      "Transfer-Encoding: gzip",
      "Transfer-Encoding: chunked, identity",
      " folded continuation",
      "NoColon",
      ": empty-name",
      "Connection: close",
      "Connection: keep-alive, Upgrade",
      "Upgrade: websocket",
      "Expect: 100-continue",
      "Expect: nonsense",
      "Content-Type: multipart/form-data; boundary=x",
      `X-Big: ${"b".repeat(20_000)}`,
    ),
    fc
      .tuple(fc.string({ unit: charsOf([0x21, 0x7e]), minLength: 1, maxLength: 20 }), fc.string({ unit: anyByte, maxLength: 60 }))
      .map(([name, value]) => `${name}: ${value}`),
    // The headers the edge reads, with NUL, controls or a lone surrogate's bytes in their values.
    fc
      .tuple(
        fc.constantFrom(
          "X-Api-Key",
          "X-Workspace-Id",
          "Idempotency-Key",
          "Origin",
          "X-Request-Id",
          "Content-Type",
          "X-Forwarded-For",
          "Access-Control-Request-Method",
        ),
        hostileText(40),
      )
      .map(([name, value]) => `${name}: ${value}`),
  );
  const body = fc.oneof(
    fc.constantFrom(
      "",
      "5\r\nhello\r\n0\r\n\r\n",
      "zz\r\nhello\r\n",
      "5\r\nhel",
      '--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhi\r\n--x--\r\n',
    ),
    fc.string({ unit: anyByte, maxLength: 200 }),
  );
  const structured = fc
    .record({ method, target, version, headers: fc.array(headerLine, { maxLength: 8 }), lineEnding: fc.constantFrom("\r\n", "\r\n", "\n", "\r"), body })
    .map(({ method, target, version, headers, lineEnding, body }) =>
      Buffer.from([`${method} ${target} ${version}`, ...headers].join(lineEnding) + lineEnding + lineEnding + body, "latin1"),
    );
  return fc.oneof({ weight: 4, arbitrary: structured }, { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)) });
}

describe("fuzz: malformed HTTP over a raw socket", () => {
  it(`every answer is below 500 and every 4xx a problem document (seed ${SEED}, ${RAW_NUM_RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(rawRequestArbitrary(tenant), async (bytes) => {
        const answers = parseResponses(await sendRaw(edge.url, bytes));
        for (const answer of answers) {
          try {
            expect(answer.status, "never a 5xx").toBeLessThan(500);
            if (answer.status >= 400) expectProblemDocument(answer, true);
          } catch (error) {
            throw new Error(
              `${String(error)}\nsent: ${JSON.stringify(bytes.subarray(0, 400).toString("latin1"))}\nanswer ${answer.status}: ${answer.body.toString("utf8").slice(0, 300)}`,
            );
          }
        }
      }),
      { seed: SEED, numRuns: RAW_NUM_RUNS },
    );
  }, 60_000);

  it("the edge still answers afterwards", async () => {
    expect((await fetch(`${edge.url}/healthz`)).status).toBe(200);
  });
});
