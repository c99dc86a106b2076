import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { describeError, needsToken } from "../../console/src/errors.ts";
import { endOfDay, enumLabel, formatBytes, formatDuration, formatTime, shortFileName } from "../../console/src/format.ts";
import { ApiKeyState } from "../../gen/docpipe/v1/key_pb.js";
import { RunStatus } from "../../gen/docpipe/v1/run_pb.js";
import { invalidArgument, notFound } from "../../src/api/errors.ts";

describe("what the console shows of an RPC error", () => {
  it("a field error: its message, code, reason and field", () => {
    expect(describeError(invalidArgument("pipeline.nodes[0].http_trigger.max_size_mb", "must be from 1 to 100", "invalid_pipeline"))).toEqual({
      message: "must be from 1 to 100",
      code: "invalid_argument",
      reason: "invalid_pipeline",
      field: "pipeline.nodes[0].http_trigger.max_size_mb",
    });
  });

  it("an error without a field", () => {
    expect(describeError(notFound("key"))).toEqual({ message: "key not found", code: "not_found", reason: "key_not_found", field: undefined });
  });

  it("an error without ErrorInfo (a network failure, a proxy's answer)", () => {
    expect(describeError(new ConnectError("upstream connect error", Code.Unavailable))).toEqual({
      message: "upstream connect error",
      code: "unavailable",
      reason: undefined,
      field: undefined,
    });
    expect(describeError(new TypeError("Failed to fetch"))).toMatchObject({ message: "Failed to fetch", code: "unknown" });
  });

  it("only Unauthenticated asks for the internal token", () => {
    expect(needsToken(new ConnectError("missing or invalid internal token", Code.Unauthenticated))).toBe(true);
    expect(needsToken(new ConnectError("denied", Code.PermissionDenied))).toBe(false);
    expect(needsToken(undefined)).toBe(false);
  });
});

describe("console formatting", () => {
  it("times in the browser's zone, to the minute; unset is blank", () => {
    expect(formatTime(timestampFromDate(new Date(2026, 10, 23, 8, 5, 59)))).toBe("2026-11-23 08:05");
    expect(formatTime(undefined)).toBe("");
  });

  it("sizes with 1 MB = 1,048,576 bytes", () => {
    expect([formatBytes(67n), formatBytes(1536), formatBytes(1_048_576n), formatBytes(10_485_760)]).toEqual(["67 B", "1.5 KB", "1.0 MB", "10.0 MB"]);
  });

  it("durations", () => {
    const at = (ms: number) => timestampFromDate(new Date(1_800_000_000_000 + ms));
    expect([formatDuration(at(0), at(850)), formatDuration(at(0), at(12_340)), formatDuration(at(0), at(245_000)), formatDuration(at(0), undefined)]).toEqual([
      "850 ms",
      "12.3 s",
      "4 min 5 s",
      "",
    ]);
  });

  it("enum values in words", () => {
    expect([enumLabel(RunStatus, RunStatus.COMPLETED), enumLabel(ApiKeyState, ApiKeyState.DEACTIVATED), enumLabel(RunStatus, 42)]).toEqual([
      "Completed",
      "Deactivated",
      "Unspecified",
    ]);
  });

  it("an expiration date lasts through its whole local day", () => {
    expect(endOfDay("2027-01-31")).toEqual(new Date(2027, 0, 31, 23, 59, 59, 999));
  });

  it("a long file name is cut in its middle to 60 characters, its ending kept; a short one is shown whole", () => {
    const long = `${"x".repeat(251)}.png`;
    const short = shortFileName(long);
    expect([...short].length).toBe(60);
    expect(short).toMatch(/^x{39}…x{16}\.png$/);
    expect(shortFileName("invoice.pdf")).toBe("invoice.pdf");
    expect(shortFileName(`${"é".repeat(60)}`)).toBe("é".repeat(60));
  });
});
