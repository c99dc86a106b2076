import { describe, expect, it } from "vitest";
import { checkCallbackUrl, ForbiddenAddressError, guardedLookup, isForbiddenAddress } from "../../src/callbacks/address-guard.ts";

describe("isForbiddenAddress", () => {
  it.each([
    "127.0.0.1",
    "127.9.9.9",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00:ec2::254",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::7f00:1",
    "2002:7f00:1::",
    "::7f00:1",
    "::a9fe:a9fe",
    "::808:808",
    "not an ip",
  ])("refuses %s", (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("allows %s", (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});

describe("checkCallbackUrl", () => {
  it("accepts public http and https URLs", () => {
    expect(checkCallbackUrl("https://example.com/hook", false)).toBeUndefined();
    expect(checkCallbackUrl("http://93.184.216.34:8080/x", false)).toBeUndefined();
  });

  it("refuses other schemes even when private networks are allowed", () => {
    expect(checkCallbackUrl("file:///etc/passwd", true)).toMatch(/http or https/);
    expect(checkCallbackUrl("ftp://example.com", true)).toMatch(/http or https/);
    expect(checkCallbackUrl("not a url", true)).toMatch(/not a valid URL/);
  });

  it("refuses loopback names and non-public IP literals unless private networks are allowed", () => {
    for (const url of [
      "http://localhost/x",
      "http://api.localhost/x",
      "http://127.0.0.1/x",
      "http://[::1]/x",
      "http://169.254.169.254/latest/meta-data",
      "http://[fd00:ec2::254]/",
      "http://0x7f000001/",
      "http://2130706433/",
      "http://[::7f00:1]/x",
      "http://[::ffff:127.0.0.1]/x",
      "http://[::ffff:7f00:1]/x",
    ]) {
      expect(checkCallbackUrl(url, false), url).toBeDefined();
      expect(checkCallbackUrl(url, true), url).toBeUndefined();
    }
  });
});

describe("guardedLookup", () => {
  const lookup = (hostname: string, all: boolean) =>
    new Promise<unknown>((resolve, reject) => {
      guardedLookup(hostname, { all }, (error, address) => (error ? reject(error) : resolve(address)));
    });

  it("refuses a name that resolves to a forbidden address, at connect time", async () => {
    await expect(lookup("localhost", false)).rejects.toThrow(ForbiddenAddressError);
    await expect(lookup("localhost", true)).rejects.toThrow(/resolves to/);
  });
});
