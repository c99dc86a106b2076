import { describe, expect, it } from "vitest";
import { isFileSystemOutage, isStorageOutage } from "../../src/data/storage/outages.ts";

const error = (fields: object) => Object.assign(new Error("storage"), fields);

describe("storage outages: 503 and a retry, or a fault", () => {
  it.each([
    ["a full disk", error({ code: "ENOSPC", syscall: "write" })],
    ["no descriptors left", error({ code: "EMFILE", syscall: "open", path: "/data/staging/x" })],
    ["the object store refusing connections", error({ code: "ECONNREFUSED" })],
    ["an S3 503", error({ name: "ServiceUnavailable", $metadata: { httpStatusCode: 503 } })],
    ["S3 throttling", error({ name: "SlowDown", $metadata: { httpStatusCode: 503 } })],
    ["a 429", error({ $metadata: { httpStatusCode: 429 } })],
    ["the SDK's timeout", error({ name: "TimeoutError" })],
  ])("%s is an outage", (_, outage) => expect(isStorageOutage(outage)).toBe(true));

  it.each([
    ["an S3 AccessDenied", error({ name: "AccessDenied", $metadata: { httpStatusCode: 403 } })],
    ["a missing bucket", error({ name: "NoSuchBucket", $metadata: { httpStatusCode: 404 } })],
    ["a bug", new TypeError("x is undefined")],
    ["nothing at all", undefined],
  ])("%s is not", (_, fault) => expect(isStorageOutage(fault)).toBe(false));

  it("staging counts the file system's outages only: a client's reset is not one", () => {
    expect(isFileSystemOutage(error({ code: "ENOSPC" }))).toBe(true);
    expect(isFileSystemOutage(error({ code: "ECONNRESET", syscall: "read" }))).toBe(false);
  });
});
