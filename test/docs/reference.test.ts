import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RPC_RULES } from "../../src/platform/auth/rpc-permissions.ts";
import { loadConfig } from "../../src/platform/config.ts";
import { PROBLEMS } from "../../src/inbound/http/problems.ts";
import { NodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";

/**
 * The reference in docs/ against the code: every service, RPC, node kind, setting and error code
 * has a row in its table, and every row names one that exists. A row's names are the backticked
 * identifiers of its first cell; the tables are found by their page and heading.
 */
const root = resolve(import.meta.dirname, "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(resolve(root, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => resolve(root, dir, name));
}

/** The backticked names in the first cell of each table row under `heading`, up to the next heading. */
function documented(page: string, heading: string): string[] {
  const lines = readFileSync(resolve(root, page), "utf8").split("\n");
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`${page} has no heading "${heading}"`);
  const names: string[] = [];
  const section = lines.slice(start + 1);
  const end = section.findIndex((line) => line.startsWith("#"));
  const rows = section.slice(0, end === -1 ? undefined : end).filter((line) => line.startsWith("|"));
  // A table's first row is its header, the second its delimiter row.
  for (const [index, row] of rows.entries()) {
    const isHeader = /^\|\s*:?-+/.test(rows[index + 1] ?? "");
    const isDelimiter = /^\|\s*:?-+/.test(row);
    if (isHeader || isDelimiter) continue;
    const firstCell = /^\|([^|]*)\|/.exec(row)?.[1] ?? "";
    names.push(...captures(firstCell, /`([^`]+)`/g));
  }
  return names;
}

/** The first capture group of every match of `pattern` (a global regular expression) in `text`. */
function captures(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].flatMap((match) => (match[1] === undefined ? [] : [match[1]]));
}

/** `names` and `expected` as sorted sets, so that a failure shows what is missing and what is extra. */
function sorted(names: Iterable<string>): string[] {
  return [...new Set(names)].sort();
}

async function generatedServices(): Promise<DescService[]> {
  const dir = resolve(root, "gen/docpipe/v1");
  const services: DescService[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith("_service_pb.js"))) {
    const module = (await import(resolve(dir, file))) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (typeof value === "object" && value !== null && (value as { kind?: string }).kind === "service") services.push(value as DescService);
    }
  }
  return services;
}

/** Every environment variable loadConfig reads: the names it asks an empty environment for (each helper reads its variable first). */
function settings(): string[] {
  const read = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get: (_target, name) => {
        if (typeof name === "string") read.add(name);
        return undefined;
      },
    },
  );
  loadConfig(env);
  return [...read];
}

/**
 * Every reason a service puts in ErrorInfo, read from the calls that make them: serviceError(code,
 * "reason"), invalidArgument(field, message, "reason") and its default, unauthenticated("reason"),
 * new PipelineError("reason"), notFound("resource") and the resources of RPC_RULES (both
 * `<resource>_not_found`). A call whose reason is not written out is one of FORWARDERS, so that a new
 * kind of call fails here instead of slipping past.
 */
const FORWARDERS = [
  "serviceError(code: Code, reason: string",
  "serviceError(Code.NotFound, `$",
  "serviceError(code, error.reason",
  "serviceError(Code.Unauthenticated, reason",
  "serviceError(Code.InvalidArgument, reason",
  "notFound(resource: string",
  "notFound(rule.resource",
  "notFound(result.outcome",
  "unauthenticated(reason: string",
];

function reasons(): { reasons: string[]; unknownCalls: string[] } {
  const found = new Set<string>();
  const unknownCalls: string[] = [];
  for (const file of sourceFiles("src")) {
    const source = readFileSync(file, "utf8").replace(/\s*\n\s*/g, " ");
    const written = [
      ...captures(source, /\bserviceError\(\s*Code\.\w+,\s*"([a-z_]+)"/g),
      ...captures(source, /\bunauthenticated\("([a-z_]+)"/g),
      ...captures(source, /\bnew PipelineError\("([a-z_]+)"/g),
      ...captures(source, /\binvalidArgument\([^;]*?, "([a-z_]+)"\)/g),
      ...captures(source, /\binvalidArgument\([^)]*reason = "([a-z_]+)"/g),
      ...captures(source, /\bnotFound\("([a-z_]+)"/g).map((resource) => `${resource}_not_found`),
    ];
    for (const reason of written) found.add(reason);
    for (const [call] of source.matchAll(
      /\b(?:serviceError|notFound|unauthenticated|new PipelineError)\((?!\s*Code\.\w+,\s*")(?!")(?!\))[^,)]*(?:,\s*[^,)]*)?/g,
    )) {
      if (!FORWARDERS.some((forwarder) => call.startsWith(forwarder))) unknownCalls.push(call);
    }
  }
  for (const rule of Object.values(RPC_RULES)) if (rule.scope === "organization") found.add(`${rule.resource}_not_found`);
  return { reasons: [...found], unknownCalls };
}

describe("the reference in docs/", () => {
  it("has a row for every service and RPC, and none for one that does not exist", async () => {
    const services = await generatedServices();
    expect(services.length).toBeGreaterThanOrEqual(10);
    expect(sorted(documented("docs/api-contract.md", "## Services"))).toEqual(sorted(services.map((service) => service.name)));
    const rpcs = services.flatMap((service) => service.methods.map((method) => `${service.name}.${method.name}`));
    expect(sorted(documented("docs/api-contract.md", "## RPCs"))).toEqual(sorted(rpcs));
  });

  it("has a row for every node kind, and none for one that does not exist", () => {
    const kinds = NodeSchema.oneofs.find((oneof) => oneof.name === "kind")?.fields.map((field) => field.name) ?? [];
    expect(kinds.length).toBeGreaterThanOrEqual(15);
    expect(sorted(documented("docs/pipelines.md", "## Node kinds"))).toEqual(sorted(kinds));
  });

  it("has a row for every setting src/platform/config.ts reads, and none for one it does not", () => {
    const names = settings();
    expect(names.length).toBeGreaterThanOrEqual(50);
    expect(sorted(documented("docs/operations.md", "## Configuration"))).toEqual(sorted(names));
  });

  it("has a row for every problem code of the edge, and none for one it does not answer", () => {
    expect(sorted(documented("docs/api-contract.md", "### Problem codes of the REST edge"))).toEqual(sorted(Object.keys(PROBLEMS)));
  });

  it("has a row for every reason of a Connect error, and none for one no service gives", () => {
    const { reasons: found, unknownCalls } = reasons();
    expect(unknownCalls).toEqual([]);
    expect(found.length).toBeGreaterThanOrEqual(30);
    expect(sorted(documented("docs/api-contract.md", "### Reasons of Connect errors"))).toEqual(sorted(found));
  });
});
