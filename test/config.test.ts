import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_PLANS, loadConfig } from "../src/platform/config.ts";

describe("configuration", () => {
  it("has defaults for everything", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: "0.0.0.0",
      port: 8080,
      internalHost: "127.0.0.1",
      internalPort: 8081,
      internalToken: undefined,
      metricsPort: undefined,
      databaseUrl: undefined,
      keyPrefix: "dp",
      maxSizeMbLimit: 100,
      seedDemo: true,
      plans: DEFAULT_PLANS,
      trustProxy: false,
      authFailuresPerMinute: 60,
    });
    expect([...config.roles].sort()).toEqual(["edge", "services", "worker"]);
  });

  it.each([
    ["PORT", "abc", /PORT must be an integer/],
    ["PORT", "70000", /PORT must be an integer from 0 to 65535/],
    ["INTERNAL_PORT", "-1", /INTERNAL_PORT/],
    ["METRICS_PORT", "http", /METRICS_PORT must be an integer from 0 to 65535/],
    ["DATABASE_URL", "not a url", /DATABASE_URL must be a URL/],
    ["DATABASE_URL", "mysql://x/y", /DATABASE_URL must use postgres: or postgresql:/],
    ["REDIS_URL", "http://x", /REDIS_URL must use redis:/],
    ["SERVICES_URL", "ftp://x", /SERVICES_URL must use http: or https:/],
    ["DOCPIPE_ROLES", "edge,cron", /DOCPIPE_ROLES .*"cron"/],
    ["DOCPIPE_ROLES", "email", /DOCPIPE_ROLES includes email: set EMAIL_PORT/],
    ["EMAIL_MAX_CONNECTIONS", "0", /EMAIL_MAX_CONNECTIONS must be an integer from 1 to 100000/],
    ["MAX_QUEUED_RUNS_PER_ORGANIZATION", "0", /MAX_QUEUED_RUNS_PER_ORGANIZATION must be an integer from 1/],
    ["KEY_PREFIX", "DP!", /KEY_PREFIX/],
    ["SEED_DEMO", "maybe", /SEED_DEMO must be true or false/],
    ["PLANS", "{nope", /PLANS must be a JSON object/],
    ["PLANS", '{"Gold":-1}', /PLANS: plan "Gold"/],
    ["MAX_SIZE_MB_LIMIT", "0", /MAX_SIZE_MB_LIMIT/],
    ["TASK_POOL_SIZE", "0", /TASK_POOL_SIZE must be an integer from 1 to 256/],
    ["PARSE_TIMEOUT_MS", "50", /PARSE_TIMEOUT_MS must be an integer from 100 to 3600000/],
    ["PARSE_MEMORY_MB", "200", /PARSE_MEMORY_MB must be an integer from 256 to 65536/],
    ["TRUST_PROXY", "true", /TRUST_PROXY must be false, a hop count/],
    ["TRUST_PROXY", "11", /TRUST_PROXY must be an integer from 1 to 10/],
    ["TRUST_PROXY", "10.0.0.0/33", /TRUST_PROXY .*"10\.0\.0\.0\/33"/],
    ["TRUST_PROXY", "127.0.0.1,proxy.example", /TRUST_PROXY .*"proxy\.example"/],
    ["AUTH_FAILURES_PER_MINUTE", "-1", /AUTH_FAILURES_PER_MINUTE must be an integer/],
  ])("%s=%s is refused with an error naming the variable", (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it("refuses a non-loopback internal bind without a token, and allows it with one", () => {
    expect(() => loadConfig({ INTERNAL_HOST: "0.0.0.0" })).toThrow(/INTERNAL_TOKEN must be set/);
    expect(loadConfig({ INTERNAL_HOST: "0.0.0.0", INTERNAL_TOKEN: "s3cret" }).internalToken).toBe("s3cret");
    expect(loadConfig({ INTERNAL_HOST: "::1" }).internalHost).toBe("::1");
  });

  it("counts as loopback only an IP literal in 127.0.0.0/8, ::1 or exactly localhost: a name that starts with 127. needs the token", () => {
    for (const host of ["127.0.0.1", "127.3.2.1", "::1", "0:0:0:0:0:0:0:1", "localhost"]) expect(loadConfig({ INTERNAL_HOST: host }).internalHost).toBe(host);
    for (const host of ["127.evil.example", "127.0.0.1.nip.io", "localhost.evil.example", "127.1", "::ffff:127.0.0.1"]) {
      expect(() => loadConfig({ INTERNAL_HOST: host }), host).toThrow(/INTERNAL_TOKEN must be set/);
    }
  });

  it("seeds demo data only on the embedded database unless asked", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://h/db" }).seedDemo).toBe(false);
    expect(loadConfig({ DATABASE_URL: "postgres://h/db", SEED_DEMO: "true" }).seedDemo).toBe(true);
  });

  it("budgets each parse at 60 s and 512 MB in a pool of one process per core but one", () => {
    expect(loadConfig({})).toMatchObject({ parseTimeoutMs: 60_000, parseMemoryMb: 512, taskPoolSize: Math.max(1, availableParallelism() - 1) });
    expect(loadConfig({ PARSE_TIMEOUT_MS: "500", PARSE_MEMORY_MB: "256", TASK_POOL_SIZE: "3" })).toMatchObject({
      parseTimeoutMs: 500,
      parseMemoryMb: 256,
      taskPoolSize: 3,
    });
  });

  it("recycles a parse process that kept more than 64 MB and runs parse processes as users from 2,000,000,000 by default", () => {
    expect(loadConfig({})).toMatchObject({ parseRecycleMb: 64, parseUser: { uid: 2_000_000_000, gid: 2_000_000_000 } });
    expect(loadConfig({ PARSE_RECYCLE_MB: "0", PARSE_UID: "1001", PARSE_GID: "1002" })).toMatchObject({
      parseRecycleMb: 0,
      parseUser: { uid: 1001, gid: 1002 },
    });
    expect(() => loadConfig({ PARSE_UID: "0" })).toThrow('PARSE_UID must be an integer from 1 to 4294901759, got "0"');
    // The last of its 65,536 users must stay below 4294967295 ("no user").
    expect(() => loadConfig({ PARSE_GID: "4294901760" })).toThrow('PARSE_GID must be an integer from 1 to 4294901759, got "4294901760"');
  });

  it("reads TRUST_PROXY as a hop count or a list of proxy addresses and ranges", () => {
    expect(loadConfig({ TRUST_PROXY: "false" }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: "127.0.0.1, 10.0.0.0/8,fd00::/8" }).trustProxy).toEqual(["127.0.0.1", "10.0.0.0/8", "fd00::/8"]);
  });

  it("lets an operator add and change plans", () => {
    expect(loadConfig({ PLANS: '{"unlimited":0,"free":20}' }).plans).toEqual({ ...DEFAULT_PLANS, free: 20, unlimited: 0 });
  });

  describe("single sign-on (OIDC_*)", () => {
    const oidc = {
      OIDC_ISSUER: "https://login.example.com",
      OIDC_CLIENT_ID: "docpipe",
      OIDC_CLIENT_SECRET: "s3cret",
      OIDC_REDIRECT_URL: "https://docpipe.example.com/auth/oidc/callback",
    };

    it("is off by default, and on with all four settings", () => {
      expect(loadConfig({}).oidc).toBeUndefined();
      expect(loadConfig(oidc).oidc).toEqual({
        issuer: "https://login.example.com",
        clientId: "docpipe",
        clientSecret: "s3cret",
        redirectUrl: "https://docpipe.example.com/auth/oidc/callback",
      });
    });

    it("needs all four: the issuer without the client, or the client without the issuer, is refused", () => {
      expect(() => loadConfig({ OIDC_ISSUER: oidc.OIDC_ISSUER })).toThrow(
        new ConfigError("OIDC_ISSUER needs OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_REDIRECT_URL"),
      );
      expect(() => loadConfig({ ...oidc, OIDC_ISSUER: "" })).toThrow(
        new ConfigError("OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_REDIRECT_URL need OIDC_ISSUER"),
      );
    });

    it("the redirect URL is the internal port's callback, and plain HTTP is for loopback only", () => {
      expect(() => loadConfig({ ...oidc, OIDC_REDIRECT_URL: "https://docpipe.example.com/callback" })).toThrow(
        'OIDC_REDIRECT_URL must end in /auth/oidc/callback (the internal port\'s callback), got "https://docpipe.example.com/callback"',
      );
      expect(() => loadConfig({ ...oidc, OIDC_ISSUER: "http://login.example.com" })).toThrow(
        'OIDC_ISSUER must use https: unless it is on loopback, got "http://login.example.com"',
      );
      expect(loadConfig({ ...oidc, OIDC_ISSUER: "http://127.0.0.1:9000", OIDC_REDIRECT_URL: "http://localhost:8081/auth/oidc/callback" }).oidc?.issuer).toBe(
        "http://127.0.0.1:9000",
      );
    });
  });
});
