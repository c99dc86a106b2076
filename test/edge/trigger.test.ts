import { createHash, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { checksumOf, generateKeyValue } from "../../src/platform/keys/key-value.ts";
import { createServiceClients } from "../../src/api/clients.ts";
import { createDirectTransport } from "../../src/api/direct-transport.ts";
import { SAMPLES } from "../formats/fixtures.ts";
import { testDeps } from "../support/deps.ts";
import { createActivePipe, createTenant, type EdgeHarness, startEdge, storedFiles, type Tenant } from "../support/edge.ts";
import { parseResponses, sendRaw } from "../support/raw-http.ts";
import { inProcessRoutes } from "../support/services.ts";

let edge: EdgeHarness;
beforeAll(async () => {
  edge = await startEdge();
  return edge.close;
});

interface FilePart {
  bytes: Uint8Array;
  fileName: string;
  contentType: string;
  field?: string;
}

const samplePart = (format: keyof typeof SAMPLES): FilePart => SAMPLES[format];

function form(...parts: FilePart[]): FormData {
  const body = new FormData();
  for (const part of parts) body.append(part.field ?? "file", new Blob([part.bytes], { type: part.contentType }), part.fileName);
  return body;
}

async function submit(pipeId: string, init: { key?: string; headers?: Record<string, string>; body?: RequestInit["body"]; path?: string } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers["x-api-key"] = init.key;
  const response = await fetch(`${edge.url}/pipes/${pipeId}/${init.path ?? "trigger"}`, {
    method: "POST",
    headers,
    body: init.body ?? form(samplePart("pdf")),
  });
  const text = await response.text();
  return { response, status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}

type Result = Awaited<ReturnType<typeof submit>>;

/** A problem document with every member the edge promises (type, title, status, detail, instance, code, traceId), for the request to `path`. */
function expectProblem(result: Pick<Result, "status" | "headers" | "body">, status: number, code: string, path?: string) {
  expect(result.status).toBe(status);
  expect(result.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(result.body).toMatchObject({ type: `https://docpipe.dev/problems/${code}`, status, code });
  expect(typeof result.body.title).toBe("string");
  expect(typeof result.body.detail).toBe("string");
  expect(result.body.traceId).toBe(result.headers.get("x-request-id"));
  if (path !== undefined) expect(result.body.instance).toBe(path);
}

async function countRows(organizationId: string) {
  const db = edge.deps.db;
  const runs = await db.selectFrom("runs").select(db.fn.countAll<string>().as("n")).where("organization_id", "=", organizationId).executeTakeFirstOrThrow();
  const files = await db.selectFrom("files").select(db.fn.countAll<string>().as("n")).where("organization_id", "=", organizationId).executeTakeFirstOrThrow();
  return { runs: Number(runs.n), files: Number(files.n) };
}

/** A rejected request leaves no run, no file row and no stored or staged bytes. */
async function expectNothingKept(tenant: Tenant, filesBefore: string[]) {
  expect(await countRows(tenant.organizationId)).toEqual({ runs: 0, files: 0 });
  expect(await storedFiles(edge.store)).toEqual(filesBefore);
}

/** An accepted request has exactly one run and one file row, and stored bytes matching its sha256. */
async function expectAccepted(result: Result, tenant: Tenant, bytes: Uint8Array) {
  expect(result.status).toBe(202);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  expect(result.body).toMatchObject({ pipeId: tenant.pipeId, status: "Queued", file: { size: bytes.length, sha256 } });
  expect(await countRows(tenant.organizationId)).toEqual({ runs: 1, files: 1 });
  expect(
    createHash("sha256")
      .update(await readFile(edge.store.pathOf(tenant.organizationId, sha256)))
      .digest("hex"),
  ).toBe(sha256);
}

describe("a missing or invalid X-Api-Key is 401", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(edge.clients);
  });

  it("missing key -> 401 api_key_missing", async () => {
    expectProblem(await submit(tenant.pipeId), 401, "api_key_missing", `/pipes/${tenant.pipeId}/trigger`);
  });

  it("malformed key -> 401 api_key_invalid", async () => {
    expectProblem(await submit(tenant.pipeId, { key: "not-a-key" }), 401, "api_key_invalid");
  });

  it("key with a bad checksum -> 401 api_key_invalid", async () => {
    const tampered = tenant.keyValue.slice(0, -1) + (tenant.keyValue.endsWith("A") ? "B" : "A");
    expectProblem(await submit(tenant.pipeId, { key: tampered }), 401, "api_key_invalid");
  });

  it("well-formed but unknown key -> 401 api_key_invalid", async () => {
    const unknown = generateKeyValue("dp");
    expect(unknown.slice(-6)).toBe(checksumOf(unknown.slice(3, -6)));
    expectProblem(await submit(tenant.pipeId, { key: unknown }), 401, "api_key_invalid");
  });

  it("deactivated key -> 401 api_key_deactivated; reactivated it works again", async () => {
    const t = await createTenant(edge.clients);
    await edge.clients.keys.deactivateKey({ organizationId: t.organizationId, keyId: t.keyId });
    expectProblem(await submit(t.pipeId, { key: t.keyValue }), 401, "api_key_deactivated");
    await edge.clients.keys.reactivateKey({ organizationId: t.organizationId, keyId: t.keyId });
    expect((await submit(t.pipeId, { key: t.keyValue })).status).toBe(202);
  });

  it("deleted key -> 401 api_key_invalid", async () => {
    const t = await createTenant(edge.clients);
    await edge.clients.keys.deleteKey({ organizationId: t.organizationId, keyId: t.keyId });
    expectProblem(await submit(t.pipeId, { key: t.keyValue }), 401, "api_key_invalid");
  });

  it("expired key -> 401 api_key_expired", async () => {
    const t = await createTenant(edge.clients);
    await edge.deps.db
      .updateTable("api_keys")
      .set({ expire_time: new Date(Date.now() - 1000) })
      .where("id", "=", t.keyId)
      .execute();
    expectProblem(await submit(t.pipeId, { key: t.keyValue }), 401, "api_key_expired");
  });

  it("a key of an organization reaches every pipe of it, in any workspace", async () => {
    const { workspace } = await edge.clients.workspaces.createWorkspace({ organizationId: tenant.organizationId, name: "second" });
    const pipeId = await createActivePipe(edge.clients, tenant.organizationId, {}, workspace!.id);
    const result = await submit(pipeId, { key: tenant.keyValue, headers: { "x-workspace-id": workspace!.id } });
    expect(result.status).toBe(202);
  });
});

describe("a key without the trigger permission is 403", () => {
  it("a key whose stored permissions lack ApiKeyAuth.Trigger.Create -> 403 permission_denied, nothing stored", async () => {
    const tenant = await createTenant(edge.clients);
    await edge.deps.db.updateTable("api_keys").set({ permissions: [] }).where("id", "=", tenant.keyId).execute();
    const before = await storedFiles(edge.store);
    const result = await submit(tenant.pipeId, { key: tenant.keyValue });
    expectProblem(result, 403, "permission_denied", `/pipes/${tenant.pipeId}/trigger`);
    expect(result.headers.get("ratelimit-limit")).toBe("1000");
    expect(await storedFiles(edge.store)).toEqual(before);
    expect(await countRows(tenant.organizationId)).toMatchObject({ runs: 0 });
  });
});

describe("a pipe that does not exist or is not active is 404", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(edge.clients);
  });

  it("unknown pipe -> 404 pipe_not_found", async () => {
    expectProblem(await submit(randomUUID(), { key: tenant.keyValue }), 404, "pipe_not_found");
  });

  it("a very long pipeId is checked like any other: 401 without a key, 404 with one", async () => {
    const long = "p".repeat(3000);
    expectProblem(await submit(long), 401, "api_key_missing");
    expectProblem(await submit(long, { key: tenant.keyValue }), 404, "pipe_not_found");
  });

  it("pipeId that is not a UUID -> 404 pipe_not_found", async () => {
    expectProblem(await submit("not-a-uuid", { key: tenant.keyValue }), 404, "pipe_not_found");
  });

  it("paused pipe -> 404; active again -> 202", async () => {
    const pipeId = await createActivePipe(edge.clients, tenant.organizationId);
    await edge.clients.pipes.pausePipe({ organizationId: tenant.organizationId, pipeId });
    expectProblem(await submit(pipeId, { key: tenant.keyValue }), 404, "pipe_not_found");
    await edge.clients.pipes.activatePipe({ organizationId: tenant.organizationId, pipeId });
    expect((await submit(pipeId, { key: tenant.keyValue })).status).toBe(202);
  });

  it("a pipe paused through another process -> 404 at once and no run, though this process cached its trigger", async () => {
    const t = await createTenant(edge.clients);
    expect((await submit(t.pipeId, { key: t.keyValue })).status).toBe(202);
    const otherProcess = createServiceClients(createDirectTransport(inProcessRoutes(testDeps(edge.deps.db))));
    await otherProcess.pipes.pausePipe({ organizationId: t.organizationId, pipeId: t.pipeId });
    expectProblem(await submit(t.pipeId, { key: t.keyValue, body: form(samplePart("png")) }), 404, "pipe_not_found");
    expect(await countRows(t.organizationId)).toEqual({ runs: 1, files: 1 });
    // Its bytes were committed before the run was refused: nothing in staging, and the orphan sweeper's to remove.
    expect((await storedFiles(edge.store)).filter((path) => path.startsWith(`${edge.store.root}/tmp/`))).toEqual([]);
  });

  it("the document storage failing -> 503 service_unavailable with Retry-After, and no run", async () => {
    const t = await createTenant(edge.clients);
    const commit = vi.spyOn(edge.store, "commit").mockRejectedValueOnce(Object.assign(new Error("no space left on device"), { code: "ENOSPC" }));
    try {
      const result = await submit(t.pipeId, { key: t.keyValue });
      expectProblem(result, 503, "service_unavailable");
      expect(result.headers.get("retry-after")).toBe("1");
      expect(result.body.detail).toBe("the document could not be stored; retry");
      expect(await countRows(t.organizationId)).toEqual({ runs: 0, files: 0 });
    } finally {
      commit.mockRestore();
    }
    expect((await submit(t.pipeId, { key: t.keyValue })).status).toBe(202);
  });

  it("the document storage refusing for good (an S3 AccessDenied) -> 500 internal_error, not a retry", async () => {
    const t = await createTenant(edge.clients);
    const denied = Object.assign(new Error("Access Denied"), { name: "AccessDenied", $metadata: { httpStatusCode: 403 } });
    const commit = vi.spyOn(edge.store, "commit").mockRejectedValueOnce(denied);
    try {
      const result = await submit(t.pipeId, { key: t.keyValue });
      expectProblem(result, 500, "internal_error");
      expect(result.headers.get("retry-after")).toBeNull();
      expect(await countRows(t.organizationId)).toEqual({ runs: 0, files: 0 });
    } finally {
      commit.mockRestore();
    }
  });

  it("the staging folder failing (disk full) -> 503 service_unavailable with Retry-After, and no run", async () => {
    const t = await createTenant(edge.clients);
    // As fs.WriteStream reports it: a write on a descriptor names no path.
    const diskFull = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", syscall: "write" });
    const stage = vi.spyOn(edge.store, "stage").mockRejectedValueOnce(diskFull);
    try {
      const result = await submit(t.pipeId, { key: t.keyValue });
      expectProblem(result, 503, "service_unavailable");
      expect(result.headers.get("retry-after")).toBe("1");
      expect(await countRows(t.organizationId)).toEqual({ runs: 0, files: 0 });
    } finally {
      stage.mockRestore();
    }
  });

  it("deleted pipe -> 404", async () => {
    const pipeId = await createActivePipe(edge.clients, tenant.organizationId);
    await edge.clients.pipes.deletePipe({ organizationId: tenant.organizationId, pipeId });
    expectProblem(await submit(pipeId, { key: tenant.keyValue }), 404, "pipe_not_found");
  });

  it("pipe without an HTTP trigger -> 404", async () => {
    const { pipe } = await edge.clients.pipes.createPipe({ organizationId: tenant.organizationId, name: "draft", pipeline: create(PipelineSchema, {}) });
    expectProblem(await submit(pipe!.id, { key: tenant.keyValue }), 404, "pipe_not_found");
  });

  // The spec: pipeId is "string (UUID format)"; UUIDs compare case-insensitively, and the edge accepts an
  // uppercase pipeId for an unlimited key. A key limited to the pipe must reach it the same way.
  it("a key limited to a pipe reaches it under its uppercase pipeId, as an unlimited key does -> 202", async () => {
    const t = await createTenant(edge.clients);
    const { keyValue: limited } = await edge.clients.keys.createKey({ organizationId: t.organizationId, name: "limited", pipeIds: [t.pipeId] });
    const upper = t.pipeId.toUpperCase();
    expect((await submit(upper, { key: t.keyValue })).status).toBe(202);
    const result = await submit(upper, { key: limited, body: form(samplePart("png")) });
    expect(result.status).toBe(202);
    expect(result.body).toMatchObject({ pipeId: t.pipeId, status: "Queued" });
  });

  it("pipe of another organization -> 404", async () => {
    const other = await createTenant(edge.clients);
    expectProblem(await submit(other.pipeId, { key: tenant.keyValue }), 404, "pipe_not_found");
  });

  it("pipe of another workspace than X-Workspace-Id -> 404", async () => {
    const { workspace } = await edge.clients.workspaces.createWorkspace({ organizationId: tenant.organizationId, name: "other" });
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "x-workspace-id": workspace!.id } }), 404, "pipe_not_found");
  });

  it("X-Workspace-Id of another organization -> 404 workspace_not_found", async () => {
    const other = await createTenant(edge.clients);
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "x-workspace-id": other.defaultWorkspaceId } }), 404, "workspace_not_found");
  });

  it("malformed X-Workspace-Id -> 400 workspace_id_invalid, the detail naming the header", async () => {
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "x-workspace-id": "nope" } });
    expectProblem(result, 400, "workspace_id_invalid");
    expect(result.body.detail).toBe("the X-Workspace-Id header must be a UUID");
  });

  it("a malformed Idempotency-Key -> 400 idempotency_key_invalid, the detail naming the header", async () => {
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "idempotency-key": "k".repeat(256) } });
    expectProblem(result, 400, "idempotency_key_invalid");
    expect(result.body.detail).toBe("the Idempotency-Key header must be 1 to 255 printable ASCII characters");
  });

  // DECISIONS: "X-Workspace-Id picks another; without it the default applies. A workspace id that is malformed -> 400".
  // A header that is sent but empty is not "without it": it names no workspace, so it is malformed.
  it("an X-Workspace-Id header that is present but empty -> 400 workspace_id_invalid, not the default workspace; nothing kept", async () => {
    const t = await createTenant(edge.clients);
    const before = await storedFiles(edge.store);
    expectProblem(await submit(t.pipeId, { key: t.keyValue, headers: { "x-workspace-id": "" } }), 400, "workspace_id_invalid", `/pipes/${t.pipeId}/trigger`);
    await expectNothingKept(t, before);
  });

  it("explicit default workspace works like none", async () => {
    const t = await createTenant(edge.clients);
    expect((await submit(t.pipeId, { key: t.keyValue, headers: { "x-workspace-id": t.defaultWorkspaceId } })).status).toBe(202);
  });
});

describe("an unsupported format or a file over the size limit is 400", () => {
  it("one byte over max size -> 400 file_too_large with maxSizeMb; nothing kept", async () => {
    const tenant = await createTenant(edge.clients, { maxSizeMb: 1, acceptedFormats: ["txt"] });
    const before = await storedFiles(edge.store);
    const bytes = new Uint8Array(1024 * 1024 + 1).fill(0x61);
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, body: form({ bytes, fileName: "a.txt", contentType: "text/plain" }) });
    expectProblem(result, 400, "file_too_large");
    expect(result.body.maxSizeMb).toBe(1);
    await expectNothingKept(tenant, before);
  });

  it("exactly max size -> 202", async () => {
    const tenant = await createTenant(edge.clients, { maxSizeMb: 1, acceptedFormats: ["txt"] });
    const bytes = new Uint8Array(1024 * 1024).fill(0x61);
    await expectAccepted(
      await submit(tenant.pipeId, { key: tenant.keyValue, body: form({ bytes, fileName: "a.txt", contentType: "text/plain" }) }),
      tenant,
      bytes,
    );
  });

  it("format not accepted -> 400 unsupported_format naming detected and accepted formats", async () => {
    const tenant = await createTenant(edge.clients, { acceptedFormats: ["pdf", "png"] });
    const before = await storedFiles(edge.store);
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, body: form(samplePart("gif")) });
    expectProblem(result, 400, "unsupported_format");
    expect(result.body).toMatchObject({ detectedFormat: "gif", acceptedFormats: ["pdf", "png"] });
    await expectNothingKept(tenant, before);
  });

  it("a PDF by name and type but not by bytes -> 400 unsupported_format", async () => {
    const tenant = await createTenant(edge.clients, { acceptedFormats: ["pdf"] });
    const before = await storedFiles(edge.store);
    const bytes = new Uint8Array([0x13, 0x37, 0x00, 0xff, 0x10, 0x20]);
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, body: form({ bytes, fileName: "report.pdf", contentType: "application/pdf" }) });
    expectProblem(result, 400, "unsupported_format");
    expect(result.body.detectedFormat).toBeNull();
    await expectNothingKept(tenant, before);
  });

  it("text in a legacy encoding with no declaration is accepted (its encoding is detected when parsed); an unknown declared charset -> 400 unsupported_format; nothing kept", async () => {
    const tenant = await createTenant(edge.clients, { acceptedFormats: ["csv", "txt", "html"] });
    const legacy = Buffer.from("name,city\nZoë,Zürich\nRenée,Besançon\nJürgen,Köln\n", "latin1");
    const legacyResult = await submit(tenant.pipeId, { key: tenant.keyValue, body: form({ bytes: legacy, fileName: "people.csv", contentType: "text/csv" }) });
    await expectAccepted(legacyResult, tenant, legacy);
    expect(legacyResult.body.file.format).toBe("csv");
    const refusing = await createTenant(edge.clients, { acceptedFormats: ["csv", "txt", "html"] });
    const before = await storedFiles(edge.store);
    const unknown = Buffer.from('<meta charset="klingon"><p>Qapla</p>');
    const unknownResult = await submit(refusing.pipeId, {
      key: refusing.keyValue,
      body: form({ bytes: unknown, fileName: "page.html", contentType: "text/html" }),
    });
    expectProblem(unknownResult, 400, "unsupported_format");
    expect(unknownResult.body.detail).toContain("declared charset is not one we know");
    await expectNothingKept(refusing, before);
  });

  it("a UTF-16 CSV with a byte order mark and a windows-1252 HTML page with a meta charset are accepted as text, bytes kept as sent", async () => {
    const tenant = await createTenant(edge.clients, { acceptedFormats: ["csv", "html"] });
    const csv = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("name,city\r\nZoë,Zürich\r\n", "utf16le")]);
    const csvResult = await submit(tenant.pipeId, { key: tenant.keyValue, body: form({ bytes: csv, fileName: "people.csv", contentType: "text/csv" }) });
    await expectAccepted(csvResult, tenant, csv);
    expect(csvResult.body.file.format).toBe("csv");
    const html = Buffer.from('<html><head><meta charset="windows-1252"></head><body>Caf\xe9 \x80 5</body></html>', "latin1");
    const htmlResult = await submit(tenant.pipeId, { key: tenant.keyValue, body: form({ bytes: html, fileName: "menu.html", contentType: "text/html" }) });
    expect(htmlResult.status).toBe(202);
    expect(htmlResult.body.file).toMatchObject({ format: "html", size: html.length });
  });

  it("no part named file -> 400 file_missing", async () => {
    const tenant = await createTenant(edge.clients);
    const body = new FormData();
    body.append("note", "hello");
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, body }), 400, "file_missing");
    await expectNothingKept(tenant, await storedFiles(edge.store));
  });

  it("a file part under another name -> 400 file_part_unexpected", async () => {
    const tenant = await createTenant(edge.clients);
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, body: form({ ...samplePart("pdf"), field: "document" }) }), 400, "file_part_unexpected");
  });

  it("two files -> 400 too_many_files; nothing kept", async () => {
    const tenant = await createTenant(edge.clients);
    const before = await storedFiles(edge.store);
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, body: form(samplePart("pdf"), samplePart("png")) }), 400, "too_many_files");
    await expectNothingKept(tenant, before);
  });

  it("empty file -> 400 file_empty; nothing kept", async () => {
    const tenant = await createTenant(edge.clients);
    const before = await storedFiles(edge.store);
    const result = await submit(tenant.pipeId, {
      key: tenant.keyValue,
      body: form({ bytes: new Uint8Array(), fileName: "a.pdf", contentType: "application/pdf" }),
    });
    expectProblem(result, 400, "file_empty");
    await expectNothingKept(tenant, before);
  });

  it("a body that is not multipart -> 400 not_multipart", async () => {
    const tenant = await createTenant(edge.clients);
    const before = await storedFiles(edge.store);
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "content-type": "application/json" }, body: '{"file":"x"}' });
    expectProblem(result, 400, "not_multipart");
    await expectNothingKept(tenant, before);
  });

  it("a broken multipart body -> 400 multipart_malformed", async () => {
    const tenant = await createTenant(edge.clients);
    const body = '--b\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4 truncated';
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "content-type": "multipart/form-data; boundary=b" }, body });
    expectProblem(result, 400, "multipart_malformed");
    await expectNothingKept(tenant, await storedFiles(edge.store));
  });
});

describe("a successful submission creates a run (202)", () => {
  it.each(["pdf", "png", "txt"] as const)("%s -> 202 with the run, file row and stored bytes", async (format) => {
    const tenant = await createTenant(edge.clients);
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, body: form(samplePart(format)) });
    await expectAccepted(result, tenant, SAMPLES[format].bytes);
    expect(result.body.file).toMatchObject({ format, name: SAMPLES[format].fileName });
    const { run } = await edge.clients.runs.getRun({ organizationId: tenant.organizationId, runId: result.body.runId });
    expect(run!.file!.id).toBe(result.body.fileId);
  });

  it("/http-trigger is the same operation as /trigger", async () => {
    const tenant = await createTenant(edge.clients);
    await expectAccepted(await submit(tenant.pipeId, { key: tenant.keyValue, path: "http-trigger" }), tenant, SAMPLES.pdf.bytes);
  });

  it("the same bytes twice are stored once and make two runs", async () => {
    const tenant = await createTenant(edge.clients);
    const first = await submit(tenant.pipeId, { key: tenant.keyValue });
    const second = await submit(tenant.pipeId, { key: tenant.keyValue });
    expect(first.body.runId).not.toBe(second.body.runId);
    expect(first.body.file.sha256).toBe(second.body.file.sha256);
    expect(await countRows(tenant.organizationId)).toEqual({ runs: 2, files: 2 });
  });
});

describe("origins (CORS)", () => {
  it("the key is checked before anything about the pipe or origin: Origin + no key -> 401, for any pipe", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://app.example.com"] });
    for (const pipeId of [tenant.pipeId, randomUUID(), "not-a-uuid"]) {
      for (const origin of ["https://app.example.com", "https://evil.example.com"]) {
        expectProblem(await submit(pipeId, { headers: { origin } }), 401, "api_key_missing");
        expectProblem(await submit(pipeId, { key: "dp_bad", headers: { origin } }), 401, "api_key_invalid");
      }
    }
  });

  it("a POST from an origin that is not allowed -> 403 origin_not_allowed", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://app.example.com"] });
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin: "https://evil.example.com" } }), 403, "origin_not_allowed");
    await expectNothingKept(tenant, await storedFiles(edge.store));
  });

  it("empty allowed origins: no browser origin, but server-to-server clients (no Origin) are fine", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: [] });
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin: "https://app.example.com" } }), 403, "origin_not_allowed");
    expect((await submit(tenant.pipeId, { key: tenant.keyValue })).status).toBe(202);
  });

  it("a POST from an allowed origin -> 202 with the origin echoed, Vary: Origin and exposed headers", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://a.example.com", "https://b.example.com"] });
    const result = await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin: "https://b.example.com" } });
    expect(result.status).toBe(202);
    expect(result.headers.get("access-control-allow-origin")).toBe("https://b.example.com");
    expect(result.headers.get("vary")).toMatch(/origin/i);
    expect(result.headers.get("access-control-expose-headers")).toMatch(/RateLimit-Remaining/);
  });

  it("preflight needs no key and echoes an allowed origin, never the first of the list", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://a.example.com", "https://b.example.com"] });
    const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/trigger`, {
      method: "OPTIONS",
      headers: { origin: "https://b.example.com", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://b.example.com");
    expect(response.headers.get("vary")).toMatch(/origin/i);
    expect(response.headers.get("access-control-allow-headers")).toBe("X-Api-Key, X-Workspace-Id, Idempotency-Key, Content-Type");
    expect(response.headers.get("access-control-allow-methods")).toBe("POST");
  });

  it("preflight from an origin that is not allowed gets no CORS headers", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://a.example.com"] });
    const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/trigger`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" },
    });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const body = (await response.json()) as { detail: string };
    expectProblem({ status: response.status, headers: response.headers, body }, 404, "not_found", `/pipes/${tenant.pipeId}/trigger`);
    // Not "no route": the 405 on this path lists OPTIONS as allowed. The same words as for a pipe that does not exist.
    expect(body.detail).toBe(
      "no cross-origin submissions from https://evil.example.com here: the pipe is not found or not active, its HTTP trigger does not allow this origin, or this address asked about too many pipes this minute",
    );
    const missing = await fetch(`${edge.url}/pipes/${randomUUID()}/trigger`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" },
    });
    expect(((await missing.json()) as { detail: string }).detail).toBe(body.detail);
  });

  it("an OPTIONS on a trigger without an Origin -> 404 not_found saying that OPTIONS answers preflights only", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://a.example.com"] });
    const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/trigger`, { method: "OPTIONS" });
    const body = (await response.json()) as { detail: string };
    expectProblem({ status: response.status, headers: response.headers, body }, 404, "not_found");
    expect(body.detail).toBe("OPTIONS here answers CORS preflights only, and this request has no Origin header");
  });
});

describe("rate limits", () => {
  it("past the plan's requests per minute -> 429 rate_limited with RateLimit-* and Retry-After", async () => {
    const tenant = await createTenant(edge.clients, {}, "free");
    const results: Result[] = [];
    for (let i = 0; i < 11; i++) results.push(await submit(tenant.pipeId, { key: tenant.keyValue }));
    expect(results.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(202));
    expect(results[0]!.headers.get("ratelimit-limit")).toBe("10");
    expect(results[0]!.headers.get("ratelimit-remaining")).toBe("9");
    const reset = Number(results[0]!.headers.get("ratelimit-reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    const limited = results[10]!;
    expectProblem(limited, 429, "rate_limited");
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await countRows(tenant.organizationId)).toEqual({ runs: 10, files: 10 });
  });

  // DECISIONS: CORS "expose RateLimit-*, Retry-After"; "429 adds Retry-After". A browser script can read
  // exposed headers (and the problem) only when the response carries Access-Control-Allow-Origin.
  it("a 429 to a browser from an allowed origin carries the CORS headers, so its script can read Retry-After and RateLimit-*", async () => {
    const origin = "https://app.example.com";
    const tenant = await createTenant(edge.clients, { allowedOrigins: [origin] }, "free");
    for (let i = 0; i < 10; i++) expect((await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin } })).status).toBe(202);
    const limited = await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin } });
    expectProblem(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("access-control-allow-origin")).toBe(origin);
    expect(limited.headers.get("access-control-expose-headers")).toMatch(/Retry-After/);
    expect(limited.headers.get("vary")).toMatch(/origin/i);
  });

  it("rate-limit headers come on errors after authentication too", async () => {
    const tenant = await createTenant(edge.clients, {}, "basic");
    const result = await submit(randomUUID(), { key: tenant.keyValue });
    expectProblem(result, 404, "pipe_not_found");
    expect(result.headers.get("ratelimit-limit")).toBe("60");
  });

  it("keys are limited separately", async () => {
    const tenant = await createTenant(edge.clients, {}, "free");
    for (let i = 0; i < 10; i++) await submit(randomUUID(), { key: tenant.keyValue });
    const { keyValue } = await edge.clients.keys.createKey({ organizationId: tenant.organizationId, name: "second key" });
    expect((await submit(tenant.pipeId, { key: keyValue })).status).toBe(202);
  });
});

describe("Idempotency-Key", () => {
  it("a repeat with the same key, pipe and file replays the first response", async () => {
    const tenant = await createTenant(edge.clients);
    const headers = { "idempotency-key": "order-42" };
    const first = await submit(tenant.pipeId, { key: tenant.keyValue, headers });
    const second = await submit(tenant.pipeId, { key: tenant.keyValue, headers });
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(second.status).toBe(202);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await countRows(tenant.organizationId)).toEqual({ runs: 1, files: 1 });
  });

  it("the same key with another file -> 422 idempotency_key_reused", async () => {
    const tenant = await createTenant(edge.clients);
    const headers = { "idempotency-key": "k-file" };
    expect((await submit(tenant.pipeId, { key: tenant.keyValue, headers })).status).toBe(202);
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers, body: form(samplePart("png")) }), 422, "idempotency_key_reused");
    expect(await countRows(tenant.organizationId)).toEqual({ runs: 1, files: 1 });
  });

  it("the same key with another pipe -> 422 idempotency_key_reused", async () => {
    const tenant = await createTenant(edge.clients);
    const otherPipe = await createActivePipe(edge.clients, tenant.organizationId);
    const headers = { "idempotency-key": "k-pipe" };
    expect((await submit(tenant.pipeId, { key: tenant.keyValue, headers })).status).toBe(202);
    expectProblem(await submit(otherPipe, { key: tenant.keyValue, headers }), 422, "idempotency_key_reused");
  });

  it("a repeat while the first is in flight -> 409 idempotency_key_in_flight", async () => {
    const tenant = await createTenant(edge.clients);
    await edge.clients.trigger.claimIdempotencyKey({ organizationId: tenant.organizationId, idempotencyKey: "busy", pipeId: tenant.pipeId });
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "idempotency-key": "busy" } }), 409, "idempotency_key_in_flight");
  });

  it("a rejected request does not use up its key", async () => {
    const tenant = await createTenant(edge.clients, { acceptedFormats: ["pdf"] });
    const headers = { "idempotency-key": "retry-me" };
    expect((await submit(tenant.pipeId, { key: tenant.keyValue, headers, body: form(samplePart("gif")) })).status).toBe(400);
    expect((await submit(tenant.pipeId, { key: tenant.keyValue, headers })).status).toBe(202);
  });

  it("keys are per organization", async () => {
    const a = await createTenant(edge.clients);
    const b = await createTenant(edge.clients);
    const headers = { "idempotency-key": "shared-name" };
    const first = await submit(a.pipeId, { key: a.keyValue, headers });
    const second = await submit(b.pipeId, { key: b.keyValue, headers });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.runId).not.toBe(first.body.runId);
  });
});

describe("every error is a problem document", () => {
  it("unknown route -> 404 not_found", async () => {
    const response = await fetch(`${edge.url}/nothing/here`);
    const body = await response.json();
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(body).toMatchObject({ code: "not_found", status: 404, instance: "/nothing/here" });
  });

  it("wrong method on the trigger -> 405 method_not_allowed with Allow", async () => {
    const response = await fetch(`${edge.url}/pipes/${randomUUID()}/trigger`);
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await response.json()).toMatchObject({ code: "method_not_allowed", status: 405 });
  });

  // Found by test/edge/fuzz.test.ts: answers Node, the router or the CORS plugin gave before reaching the error handler.
  /** The one answer to a request written by hand, shaped like `submit`'s result. */
  async function rawAnswer(request: string) {
    const answers = parseResponses(await sendRaw(edge.url, Buffer.from(request, "latin1")));
    expect(answers).toHaveLength(1);
    const [answer] = answers;
    return { status: answer!.status, headers: new Headers(answer!.headers as Record<string, string>), body: JSON.parse(answer!.body.toString("utf8")) };
  }

  it("a request Node cannot parse -> 400 bad_request, not Fastify's plain JSON", async () => {
    expectProblem(await rawAnswer("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"), 400, "bad_request", "");
  });

  it("the answer to an unparseable HEAD has no body", async () => {
    const raw = (await sendRaw(edge.url, Buffer.from("HEAD /a b HTTP/1.1\r\nHost: x\r\n\r\n"))).toString("latin1");
    expect(raw).toMatch(/^HTTP\/1\.1 400 .*\r\nContent-Type: application\/problem\+json/s);
    expect(raw.endsWith("\r\n\r\n")).toBe(true);
  });

  it("headers past Node's limit -> 431 headers_too_large", async () => {
    expectProblem(await rawAnswer(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`), 431, "headers_too_large");
  });

  it("an HTTP/1.1 request without Host -> 400 bad_request, not Node's empty 400", async () => {
    expectProblem(await rawAnswer("GET /healthz HTTP/1.1\r\n\r\n"), 400, "bad_request", "/healthz");
  });

  it("an Expect other than 100-continue -> 417 expectation_failed, not Node's empty 417", async () => {
    expectProblem(await rawAnswer("GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\n\r\n"), 417, "expectation_failed", "/healthz");
  });

  it("a malformed percent-escape in the path -> 400 bad_request, not the router's plain JSON", async () => {
    const response = await fetch(`${edge.url}/pipes/%ZZ/trigger`, { method: "POST" });
    expectProblem({ status: response.status, headers: response.headers, body: await response.json() }, 400, "bad_request", "/pipes/%ZZ/trigger");
  });

  it("an OPTIONS from an allowed origin without Access-Control-Request-Method is answered like a preflight, not with plain text", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://a.example.com"] });
    const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/trigger`, { method: "OPTIONS", headers: { origin: "https://a.example.com" } });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://a.example.com");
  });
});

describe("spec and DECISIONS, asserted exactly", () => {
  it("202 body: { runId, fileId, pipeId, workspaceId, status: Queued, file: { name, contentType, format, size, sha256 }, createdAt } as JSON", async () => {
    const tenant = await createTenant(edge.clients);
    const before = Date.now();
    const result = await submit(tenant.pipeId, { key: tenant.keyValue });
    expect(result.status).toBe(202);
    expect(result.headers.get("content-type")).toMatch(/^application\/json/);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect(Object.keys(result.body).sort()).toEqual(["createdAt", "file", "fileId", "pipeId", "runId", "status", "workspaceId"]);
    expect(result.body).toEqual({
      runId: expect.stringMatching(uuid),
      fileId: expect.stringMatching(uuid),
      pipeId: tenant.pipeId,
      workspaceId: tenant.defaultWorkspaceId,
      status: "Queued",
      file: {
        name: SAMPLES.pdf.fileName,
        contentType: SAMPLES.pdf.contentType,
        format: "pdf",
        size: SAMPLES.pdf.bytes.length,
        sha256: createHash("sha256").update(SAMPLES.pdf.bytes).digest("hex"),
      },
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.parse(result.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    const { run } = await edge.clients.runs.getRun({ organizationId: tenant.organizationId, runId: result.body.runId });
    expect(run!.pipeId).toBe(tenant.pipeId);
  });

  it("unknown route -> 404 not_found, a full problem document", async () => {
    const response = await fetch(`${edge.url}/nothing/here?x=1`);
    expectProblem({ status: response.status, headers: response.headers, body: await response.json() }, 404, "not_found", "/nothing/here");
  });

  it.each(["GET", "PUT", "PATCH", "DELETE"])("%s on either trigger path -> 405 method_not_allowed with Allow, a full problem document", async (method) => {
    for (const path of ["trigger", "http-trigger"]) {
      const pipeId = randomUUID();
      const response = await fetch(`${edge.url}/pipes/${pipeId}/${path}`, { method });
      const result = { status: response.status, headers: response.headers, body: await response.json() };
      expectProblem(result, 405, "method_not_allowed", `/pipes/${pipeId}/${path}`);
      expect(result.headers.get("allow")).toBe("POST, OPTIONS");
    }
  });

  it("HEAD on either trigger path -> 405 with Allow and the problem's type, without a body", async () => {
    for (const path of ["trigger", "http-trigger"]) {
      const response = await fetch(`${edge.url}/pipes/${randomUUID()}/${path}`, { method: "HEAD" });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST, OPTIONS");
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await response.text()).toBe("");
    }
  });

  it("/http-trigger answers errors as /trigger does: 401 api_key_missing, 404 pipe_not_found, 400 unsupported_format", async () => {
    const tenant = await createTenant(edge.clients, { acceptedFormats: ["pdf"] });
    expectProblem(await submit(tenant.pipeId, { path: "http-trigger" }), 401, "api_key_missing", `/pipes/${tenant.pipeId}/http-trigger`);
    expectProblem(await submit(randomUUID(), { key: tenant.keyValue, path: "http-trigger" }), 404, "pipe_not_found");
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, path: "http-trigger", body: form(samplePart("png")) }), 400, "unsupported_format");
  });

  it("order: rate limit (429) before workspace and pipe (404)", async () => {
    const tenant = await createTenant(edge.clients, {}, "free");
    for (let i = 0; i < 10; i++) expectProblem(await submit(randomUUID(), { key: tenant.keyValue }), 404, "pipe_not_found");
    expectProblem(await submit(randomUUID(), { key: tenant.keyValue }), 429, "rate_limited");
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "x-workspace-id": "nope" } }), 429, "rate_limited");
  });

  it("order: workspace and pipe (404) before origin (403); origin (403) before the body (400), nothing kept", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://app.example.com"], maxSizeMb: 1, acceptedFormats: ["pdf"] });
    const origin = "https://evil.example.com";
    expectProblem(await submit(randomUUID(), { key: tenant.keyValue, headers: { origin } }), 404, "pipe_not_found");
    const paused = await createActivePipe(edge.clients, tenant.organizationId, { allowedOrigins: ["https://app.example.com"] });
    await edge.clients.pipes.pausePipe({ organizationId: tenant.organizationId, pipeId: paused });
    expectProblem(await submit(paused, { key: tenant.keyValue, headers: { origin } }), 404, "pipe_not_found");
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin, "x-workspace-id": randomUUID() } }), 404, "workspace_not_found");
    const before = await storedFiles(edge.store);
    const tooLarge = form({ bytes: new Uint8Array(1024 * 1024 + 1), fileName: "a.pdf", contentType: "application/pdf" });
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin }, body: tooLarge }), 403, "origin_not_allowed");
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin }, body: form(samplePart("png")) }), 403, "origin_not_allowed");
    expectProblem(
      await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin, "content-type": "text/plain" }, body: "x" }),
      403,
      "origin_not_allowed",
    );
    await expectNothingKept(tenant, before);
  });

  it("an unknown X-Workspace-Id (UUID-shaped) of one's own organization -> 404 workspace_not_found; a deleted workspace too", async () => {
    const tenant = await createTenant(edge.clients);
    expectProblem(await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "x-workspace-id": randomUUID() } }), 404, "workspace_not_found");
    const { workspace } = await edge.clients.workspaces.createWorkspace({ organizationId: tenant.organizationId, name: "doomed" });
    const pipeId = await createActivePipe(edge.clients, tenant.organizationId, {}, workspace!.id);
    await edge.clients.workspaces.deleteWorkspace({ organizationId: tenant.organizationId, workspaceId: workspace!.id });
    expectProblem(await submit(pipeId, { key: tenant.keyValue, headers: { "x-workspace-id": workspace!.id } }), 404, "workspace_not_found");
  });

  it("RateLimit-Limit, -Remaining and -Reset (Unix seconds) come on every answer after authentication: 400, 403, 404, 409, 422", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://app.example.com"], acceptedFormats: ["pdf"] }, "basic");
    const otherPipe = await createActivePipe(edge.clients, tenant.organizationId);
    expect((await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "idempotency-key": "used" } })).status).toBe(202);
    await edge.clients.trigger.claimIdempotencyKey({ organizationId: tenant.organizationId, idempotencyKey: "busy", pipeId: tenant.pipeId });
    const answers: [Result, number, string][] = [
      [await submit(tenant.pipeId, { key: tenant.keyValue, body: form(samplePart("png")) }), 400, "unsupported_format"],
      [await submit(tenant.pipeId, { key: tenant.keyValue, headers: { origin: "https://evil.example.com" } }), 403, "origin_not_allowed"],
      [await submit(randomUUID(), { key: tenant.keyValue }), 404, "pipe_not_found"],
      [await submit(tenant.pipeId, { key: tenant.keyValue, headers: { "idempotency-key": "busy" } }), 409, "idempotency_key_in_flight"],
      [await submit(otherPipe, { key: tenant.keyValue, headers: { "idempotency-key": "used" } }), 422, "idempotency_key_reused"],
    ];
    let remaining = 59;
    for (const [result, status, code] of answers) {
      expectProblem(result, status, code);
      expect(result.headers.get("ratelimit-limit")).toBe("60");
      expect(result.headers.get("ratelimit-remaining")).toBe(String(--remaining));
      const reset = Number(result.headers.get("ratelimit-reset"));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    }
  });

  it("401 answers carry no rate-limit headers of a key (nothing is known of it)", async () => {
    const tenant = await createTenant(edge.clients);
    const result = await submit(tenant.pipeId, { key: "dp_bad" });
    expectProblem(result, 401, "api_key_invalid");
    expect(result.headers.get("ratelimit-limit")).toBeNull();
  });

  it("a POST from an allowed origin exposes exactly RateLimit-*, Retry-After, Idempotent-Replayed and X-Request-Id; a replay says Idempotent-Replayed: true", async () => {
    const origin = "https://b.example.com";
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["https://a.example.com", origin] });
    const headers = { origin, "idempotency-key": "cors-replay" };
    const first = await submit(tenant.pipeId, { key: tenant.keyValue, headers });
    const replay = await submit(tenant.pipeId, { key: tenant.keyValue, headers });
    for (const result of [first, replay]) {
      expect(result.status).toBe(202);
      expect(result.headers.get("access-control-allow-origin")).toBe(origin);
      expect(result.headers.get("access-control-expose-headers")).toBe(
        "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Idempotent-Replayed, X-Request-Id",
      );
    }
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.runId).toBe(first.body.runId);
  });

  it("a preflight on /http-trigger is answered like one on /trigger, and an origin of a * list is echoed, not *", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["*"] });
    const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/http-trigger`, {
      method: "OPTIONS",
      headers: { origin: "https://any.example.com", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key, idempotency-key" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://any.example.com");
    expect(response.headers.get("vary")).toMatch(/origin/i);
    expect(response.headers.get("access-control-allow-headers")).toBe("X-Api-Key, X-Workspace-Id, Idempotency-Key, Content-Type");
  });
});
