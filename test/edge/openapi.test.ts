import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Validator } from "@seriousme/openapi-schema-validator";
import { beforeAll, describe, expect, it } from "vitest";
import {
  curlExamples,
  type OpenApiDocument,
  type Operation,
  type PathItem,
  type Reference,
  type Response as ResponseObject,
  problemResponseName,
} from "../../src/inbound/http/openapi.ts";
import { PROBLEMS, type ProblemCode, type ProblemDocument } from "../../src/inbound/http/problems.ts";
import { acceptedSchema } from "../../src/inbound/http/schemas.ts";
import { SAMPLES } from "../formats/fixtures.ts";
import { createTenant, type EdgeHarness, startEdge } from "../support/edge.ts";
import { parseResponses, sendRaw } from "../support/raw-http.ts";

let edge: EdgeHarness;
let document: OpenApiDocument;
beforeAll(async () => {
  edge = await startEdge();
  document = (await (await fetch(`${edge.url}/openapi.json`)).json()) as OpenApiDocument;
  return edge.close;
});

const CODES = Object.keys(PROBLEMS) as ProblemCode[];

/** Follows a local reference such as `#/components/responses/Problem404`; undefined when it leads nowhere. */
function resolve<T>(value: T | Reference): T | undefined {
  if (typeof value !== "object" || value === null || !("$ref" in value)) return value;
  return value.$ref
    .slice(2)
    .split("/")
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document) as T | undefined;
}

/** Every `$ref` string anywhere in the document. */
function referencesIn(node: unknown): string[] {
  if (typeof node !== "object" || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => (key === "$ref" && typeof value === "string" ? [value] : referencesIn(value)));
}

function triggerItem(path: string): PathItem {
  return resolve<PathItem>(document.paths[path]!)!;
}

function operations(): Operation[] {
  return Object.values(document.paths).flatMap((item) => Object.values(resolve<PathItem>(item)!));
}

describe("GET /openapi.json", () => {
  it("is JSON, served without a key, and is the document the docs page shows", async () => {
    const response = await fetch(`${edge.url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await response.json()).toEqual(await (await fetch(`${edge.url}/docs/json`)).json());
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it("has the shape of an OpenAPI 3.1 document, and every $ref resolves", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const refs = referencesIn(document);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      // Component names are limited to ^[a-zA-Z0-9.\-_]+$ by OpenAPI.
      expect(ref).toMatch(/^#\/components\/(schemas|responses|headers|pathItems)\/[\w.-]+$/);
      expect(resolve({ $ref: ref }), ref).toBeDefined();
    }
    for (const operation of operations()) {
      expect(operation.summary).toEqual(expect.any(String));
      for (const status of Object.keys(operation.responses)) expect(status).toMatch(/^[1-5]\d\d$/);
    }
  });

  it("lists both trigger paths, the preflight, the 405 of other methods and the health probes, and nothing else", () => {
    expect(Object.keys(document.paths).sort()).toEqual(["/healthz", "/pipes/{pipeId}/http-trigger", "/pipes/{pipeId}/trigger", "/readyz"]);
    for (const path of ["/pipes/{pipeId}/trigger", "/pipes/{pipeId}/http-trigger"]) {
      expect(Object.keys(triggerItem(path)).sort()).toEqual(["delete", "get", "head", "options", "patch", "post", "put"]);
      for (const method of ["get", "head", "put", "patch", "delete"] as const) {
        expect(triggerItem(path)[method]!.responses).toEqual({ 405: { $ref: "#/components/responses/Problem405" } });
      }
      const pipeId = triggerItem(path).post!.parameters!.find((parameter) => parameter.name === "pipeId");
      expect(pipeId).toMatchObject({ in: "path", required: true, schema: { type: "string" } });
    }
    expect(resolve<PathItem>(document.paths["/healthz"]!)!.get!.responses).toHaveProperty("200");
    expect(resolve<PathItem>(document.paths["/readyz"]!)!.get!.responses).toHaveProperty("503");
  });

  it("the key is an apiKey security scheme in the X-Api-Key header, required by the POST only", () => {
    expect(document.components.securitySchemes.ApiKey).toMatchObject({ type: "apiKey", in: "header", name: "X-Api-Key" });
    const item = triggerItem("/pipes/{pipeId}/trigger");
    expect(item.post!.security).toEqual([{ ApiKey: [] }]);
    expect(item.options!.security).toBeUndefined();
  });

  it("the POST takes X-Workspace-Id, Idempotency-Key and Origin headers and a multipart body with one binary part `file`", () => {
    const post = triggerItem("/pipes/{pipeId}/trigger").post!;
    const headers = post.parameters!.filter((parameter) => parameter.in === "header").map((parameter) => parameter.name);
    expect(headers.sort()).toEqual(["Idempotency-Key", "Origin", "X-Workspace-Id"]);
    const multipart = post.requestBody!.content["multipart/form-data"]!;
    expect(post.requestBody!.required).toBe(true);
    expect(multipart.schema).toMatchObject({ type: "object", required: ["file"], properties: { file: { type: "string", format: "binary" } } });
  });

  it("the 202 body is the route's schema, with rate-limit and replay headers and an example that fits it", () => {
    expect(document.components.schemas.Accepted).toEqual(acceptedSchema);
    const accepted = triggerItem("/pipes/{pipeId}/trigger").post!.responses["202"] as ResponseObject;
    expect(Object.keys(accepted.headers!)).toEqual(
      expect.arrayContaining(["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Idempotent-Replayed"]),
    );
    expect(document.components.headers["RateLimit-Reset"]!.description).toMatch(/Unix time in seconds/);
    const media = accepted.content!["application/json"]!;
    expect(media.schema).toEqual({ $ref: "#/components/schemas/Accepted" });
    const example = Object.values(media.examples!)[0]!.value as Record<string, unknown>;
    expect(Object.keys(example).sort()).toEqual([...acceptedSchema.required].sort());
  });

  it("every problem code of PROBLEMS has an example under the response of its status", () => {
    const problem = document.components.schemas.Problem!;
    expect(problem.properties!.code!.enum).toEqual(CODES);
    for (const code of CODES) {
      const { status, title } = PROBLEMS[code];
      const response = document.components.responses[problemResponseName(status)]!;
      const example = response.content!["application/problem+json"]!.examples![code]!.value as Record<string, unknown>;
      expect(example, code).toMatchObject({ type: `https://docpipe.dev/problems/${code}`, title, status, code });
      // Only members the Problem schema declares, and all it requires.
      expect(
        Object.keys(example).filter((member) => !(member in problem.properties!)),
        code,
      ).toEqual([]);
      for (const member of problem.required!) expect(example, `${code}.${member}`).toHaveProperty(member);
    }
  });

  it("the POST refers to every problem status but 405; 429 carries Retry-After", () => {
    const responses = triggerItem("/pipes/{pipeId}/trigger").post!.responses;
    const statuses = [...new Set(Object.values(PROBLEMS).map((problem) => String(problem.status)))].filter((status) => status !== "405");
    for (const status of statuses) expect(responses[status]).toEqual({ $ref: `#/components/responses/${problemResponseName(Number(status))}` });
    expect(responses).not.toHaveProperty("405");
    expect(document.components.responses.Problem429!.headers).toHaveProperty("Retry-After");
    expect(document.components.responses.Problem405!.headers).toHaveProperty("Allow");
  });

  it("the examples say what the edge says", async () => {
    const tenant = await createTenant(edge.clients);
    const trigger = `${edge.url}/pipes/${tenant.pipeId}/trigger`;
    const key = { "x-api-key": tenant.keyValue };
    const real: Partial<Record<ProblemCode, Response>> = {
      api_key_missing: await fetch(trigger, { method: "POST" }),
      api_key_invalid: await fetch(trigger, { method: "POST", headers: { "x-api-key": "dp_nope" } }),
      workspace_id_invalid: await fetch(trigger, { method: "POST", headers: { ...key, "x-workspace-id": "nope" } }),
      pipe_not_found: await fetch(`${edge.url}/pipes/not-a-pipe/trigger`, { method: "POST", headers: key }),
      not_multipart: await fetch(trigger, { method: "POST", headers: { ...key, "content-type": "text/plain" }, body: "x" }),
      file_empty: await fetch(trigger, { method: "POST", headers: key, body: formWith(new Uint8Array()) }),
      method_not_allowed: await fetch(trigger, { method: "GET" }),
      not_found: await fetch(`${edge.url}/pipes`),
    };
    const bodies = await Promise.all(Object.values(real).map(async (response) => (await response.json()) as ProblemDocument));
    for (const raw of [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`, "GET / HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\n\r\n"]) {
      const [answer] = parseResponses(await sendRaw(edge.url, Buffer.from(raw)));
      bodies.push(JSON.parse(answer!.body.toString("utf8")) as ProblemDocument);
    }
    expect(bodies.map((body) => body.code)).toEqual([...Object.keys(real), "headers_too_large", "expectation_failed"]);
    for (const body of bodies) {
      const code = body.code;
      const example = document.components.responses[problemResponseName(body.status)]!.content!["application/problem+json"]!.examples![code]!.value;
      expect(example, code).toMatchObject({ code: body.code, status: body.status, title: body.title, type: body.type, detail: body.detail });
    }
  });
});

function formWith(bytes: Uint8Array): FormData {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type: "application/pdf" }), "invoice.pdf");
  return form;
}

describe("GET /docs", () => {
  let page: string;
  let response: Response;
  beforeAll(async () => {
    response = await fetch(`${edge.url}/docs`);
    page = await response.text();
  });

  it("is an HTML page whose policy lets nothing load from elsewhere, and whose assets this server serves", async () => {
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const policy = response.headers.get("content-security-policy")!;
    expect(policy).toMatch(/^default-src 'none';/);
    for (const directive of policy
      .split(";")
      .map((part) => part.trim())
      .filter((part) => part !== "")) {
      expect(directive, directive).toMatch(/^[\w-]+( 'none'| 'self'| data:)*$|^style-src 'self' 'unsafe-inline'$/);
    }
    const assets = [...page.matchAll(/\b(?:src|href)\s*=\s*"([^"]*)"/gi)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThan(2);
    for (const asset of assets) {
      expect(asset).toMatch(/^\/docs\//);
      expect((await fetch(edge.url + asset)).status, asset).toBe(200);
    }
  });

  it("the document it shows names both paths, the headers, the 202 body and every problem with its example", () => {
    const text = JSON.stringify(document);
    for (const name of [
      "/pipes/{pipeId}/trigger",
      "/pipes/{pipeId}/http-trigger",
      "X-Api-Key",
      "X-Workspace-Id",
      "Idempotency-Key",
      "Idempotent-Replayed",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "Retry-After",
      "Access-Control-Allow-Origin",
      "/healthz",
      "/readyz",
    ]) {
      expect(text).toContain(name);
    }
    for (const property of Object.keys(acceptedSchema.properties)) expect(document.components.schemas.Accepted!.properties).toHaveProperty(property);
    for (const code of CODES) {
      const response = document.components.responses[problemResponseName(PROBLEMS[code].status)]!;
      expect(response.description).toContain(`\`${code}\`: ${PROBLEMS[code].title}`);
      expect(response.content!["application/problem+json"]!.examples![code]!.value).toMatchObject({ type: `https://docpipe.dev/problems/${code}` });
    }
  });

  const hasCurl = existsSync("/usr/bin/curl");
  it.skipIf(!hasCurl)("the curl examples of the document work as written: 202", async () => {
    const tenant = await createTenant(edge.clients);
    const dir = await mkdtemp(join(tmpdir(), "docpipe-curl-"));
    const description = triggerItem("/pipes/{pipeId}/trigger").post!.description;
    try {
      await writeFile(join(dir, "invoice.pdf"), SAMPLES.pdf.bytes);
      const env = { ...process.env, DOCPIPE_URL: edge.url, DOCPIPE_API_KEY: tenant.keyValue, PIPE_ID: tenant.pipeId, WORKSPACE_ID: tenant.defaultWorkspaceId };
      for (const example of curlExamples()) {
        expect(description).toContain(example);
        const { stdout } = await promisify(execFile)("bash", ["-c", `${example} --silent --show-error`], { cwd: dir, env });
        expect(stdout, example).toMatch(/^HTTP\/1\.1 202 /);
        expect(stdout).toMatch(/"status":"Queued"/);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
