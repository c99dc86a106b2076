import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_PLANS, loadConfig } from "../src/config.ts";

describe("configuration", () => {
  it("has defaults for everything", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: "0.0.0.0",
      port: 8080,
      internalHost: "127.0.0.1",
      internalPort: 8081,
      internalToken: undefined,
      databaseUrl: undefined,
      keyPrefix: "dp",
      maxSizeMbLimit: 100,
      seedDemo: true,
      plans: DEFAULT_PLANS,
    });
    expect([...config.roles].sort()).toEqual(["edge", "services", "worker"]);
  });

  it.each([
    ["PORT", "abc", /PORT must be an integer/],
    ["PORT", "70000", /PORT must be an integer from 0 to 65535/],
    ["INTERNAL_PORT", "-1", /INTERNAL_PORT/],
    ["DATABASE_URL", "not a url", /DATABASE_URL must be a URL/],
    ["DATABASE_URL", "mysql://x/y", /DATABASE_URL must use postgres: or postgresql:/],
    ["REDIS_URL", "http://x", /REDIS_URL must use redis:/],
    ["SERVICES_URL", "ftp://x", /SERVICES_URL must use http: or https:/],
    ["DOCPIPE_ROLES", "edge,cron", /DOCPIPE_ROLES .*"cron"/],
    ["KEY_PREFIX", "DP!", /KEY_PREFIX/],
    ["SEED_DEMO", "maybe", /SEED_DEMO must be true or false/],
    ["PLANS", "{nope", /PLANS must be a JSON object/],
    ["PLANS", '{"Gold":-1}', /PLANS: plan "Gold"/],
    ["MAX_SIZE_MB_LIMIT", "0", /MAX_SIZE_MB_LIMIT/],
  ])("%s=%s is refused with an error naming the variable", (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it("refuses a non-loopback internal bind without a token, and allows it with one", () => {
    expect(() => loadConfig({ INTERNAL_HOST: "0.0.0.0" })).toThrow(/INTERNAL_TOKEN must be set/);
    expect(loadConfig({ INTERNAL_HOST: "0.0.0.0", INTERNAL_TOKEN: "s3cret" }).internalToken).toBe("s3cret");
    expect(loadConfig({ INTERNAL_HOST: "::1" }).internalHost).toBe("::1");
  });

  it("seeds demo data only on the embedded database unless asked", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://h/db" }).seedDemo).toBe(false);
    expect(loadConfig({ DATABASE_URL: "postgres://h/db", SEED_DEMO: "true" }).seedDemo).toBe(true);
  });

  it("lets an operator add and change plans", () => {
    expect(loadConfig({ PLANS: '{"unlimited":0,"free":20}' }).plans).toEqual({ ...DEFAULT_PLANS, free: 20, unlimited: 0 });
  });
});
