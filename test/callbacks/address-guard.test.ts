import { pbkdf2 } from "node:crypto";
import type { LookupFunction } from "node:net";
import { promisify } from "node:util";
import { describe, expect, it, onTestFinished } from "vitest";
import { checkCallbackUrl, createGuardedLookup, ForbiddenAddressError, isForbiddenAddress } from "../../src/runs/deliveries/address-guard.ts";
import { startDnsServer } from "./dns-server.ts";

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
  const RECORDS = { "public.test": ["93.184.216.34", "2606:2800:220:1::1"], "private.test": ["93.184.216.34", "10.1.2.3"], "loopback.test": ["127.0.0.1"] };
  const lookupWith = (lookup: LookupFunction, hostname: string, all: boolean) =>
    new Promise<unknown>((resolve, reject) => {
      lookup(hostname, { all }, (error, address) => (error ? reject(error) : resolve(address)));
    });

  it("resolves over DNS (c-ares) and returns the public addresses", async () => {
    const dns = await startDnsServer(RECORDS);
    onTestFinished(dns.close);
    const lookup = createGuardedLookup({ servers: [dns.server] });
    expect(await lookupWith(lookup, "public.test", true)).toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1::1", family: 6 },
    ]);
    expect(await lookupWith(lookup, "public.test", false)).toBe("93.184.216.34");
    await expect(lookupWith(lookup, "missing.test", false)).rejects.toMatchObject({ code: "ENOTFOUND" });
  });

  it("refuses a name that resolves to a forbidden address, naming the host and never the address", async () => {
    const dns = await startDnsServer(RECORDS);
    onTestFinished(dns.close);
    const lookup = createGuardedLookup({ servers: [dns.server] });
    for (const [hostname, address] of [
      ["private.test", "10.1.2.3"],
      ["loopback.test", "127.0.0.1"],
    ] as const) {
      const error = await lookupWith(lookup, hostname, false).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ForbiddenAddressError);
      expect((error as Error).message).toContain(hostname);
      expect((error as Error).message).not.toContain(address);
    }
  });

  it("a DNS server that never answers fails the lookup with a timeout, and holds none of libuv's threads meanwhile", async () => {
    const dns = await startDnsServer(RECORDS, true);
    onTestFinished(dns.close);
    const lookup = createGuardedLookup({ servers: [dns.server], timeoutMs: 3_000, tries: 1 });
    let settled = 0;
    const lookups = Array.from({ length: 8 }, (_, index) =>
      lookupWith(lookup, `silent-${index}.test`, false).then(
        () => settled++,
        (error: NodeJS.ErrnoException) => (settled++, error.code),
      ),
    );
    // Work on the thread pool (four threads) runs while eight lookups wait.
    await Promise.all(Array.from({ length: 8 }, () => promisify(pbkdf2)("x", "salt", 1, 32, "sha256")));
    expect(settled).toBe(0);
    expect(await Promise.all(lookups)).toEqual(Array.from({ length: 8 }, () => "ETIMEOUT"));
  });
});
