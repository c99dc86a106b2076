import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const buf = join(root, "node_modules/.bin/buf");
const baseline = join(root, "proto/released/docpipe.binpb");

let workdir: string | undefined;
afterEach(async () => {
  if (workdir !== undefined) await rm(workdir, { recursive: true, force: true });
  workdir = undefined;
});

/** A copy of the contract with `edit` applied to one file, checked by `npm run breaking`'s command. */
async function breakingCheck(file: string, edit: (source: string) => string): Promise<{ code: number; output: string }> {
  workdir = await mkdtemp(join(tmpdir(), "docpipe-contract-"));
  await cp(join(root, "proto"), join(workdir, "proto"), { recursive: true });
  await cp(join(root, "buf.yaml"), join(workdir, "buf.yaml"));
  const path = join(workdir, "proto/docpipe/v1", file);
  const source = await readFile(path, "utf8");
  const edited = edit(source);
  expect(edited).not.toBe(source);
  await writeFile(path, edited);
  try {
    const { stdout, stderr } = await run(buf, ["breaking", "--against", baseline], { cwd: workdir });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, output: failure.stdout + failure.stderr };
  }
}

describe("buf breaking against the released contract", () => {
  it("fails when a field is removed", async () => {
    const result = await breakingCheck("key.proto", (source) => source.replace(/\n  \/\/ The prefix and the last four[^\n]*\n  string hint = 4;/, ""));
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/hint/);
  });

  it("fails when a field changes type", async () => {
    const result = await breakingCheck("pipe.proto", (source) => source.replace("int32 max_size_mb = 3;", "int64 max_size_mb = 3;"));
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/max_size_mb/);
  });

  it("fails when an RPC is removed", async () => {
    const result = await breakingCheck("key_service.proto", (source) =>
      source.replace(/\n  \/\/ ReactivateKey lets[^\n]*\n  rpc ReactivateKey\(ReactivateKeyRequest\) returns \(ReactivateKeyResponse\);/, ""),
    );
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/ReactivateKey/);
  });

  it("passes a compatible edit: a new field", async () => {
    const result = await breakingCheck("key.proto", (source) =>
      source.replace(
        "  google.protobuf.Timestamp deactivate_time = 10;\n",
        "  google.protobuf.Timestamp deactivate_time = 10;\n  // A note.\n  string note = 99;\n",
      ),
    );
    expect(result).toEqual({ code: 0, output: "" });
  });

  it("passes the contract as it is", async () => {
    const result = await breakingCheck("key.proto", (source) => `${source}\n`);
    expect(result).toEqual({ code: 0, output: "" });
  });
});
