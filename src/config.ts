import { resolve } from "node:path";

/** Requests per minute per API key for each plan; 0 means unlimited. */
export const DEFAULT_PLANS: Readonly<Record<string, number>> = {
  free: 10,
  basic: 60,
  standard: 300,
  advanced: 1000,
};

export type Role = "edge" | "services" | "worker";

export interface Config {
  /** Public REST edge. */
  host: string;
  port: number;
  /** Internal Connect services. */
  internalHost: string;
  internalPort: number;
  internalToken: string | undefined;
  /** What this process runs. */
  roles: ReadonlySet<Role>;
  /** When set, the edge calls the Connect services at this URL instead of in-process. */
  servicesUrl: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPostgresPort: number;
  storageDir: string;
  redisUrl: string | undefined;
  keyPrefix: string;
  plans: Readonly<Record<string, number>>;
  maxSizeMbLimit: number;
  pageTokenSecret: string | undefined;
  /** How long AuthenticateKey reuses a key's stored credentials (ms); 0 reads them on every request. */
  keyCacheMs: number;
  seedDemo: boolean;
  logLevel: string;
  shutdownTimeoutMs: number;
  /** Runs one worker process executes at a time. */
  workerConcurrency: number;
  /** How long a claimed run stays leased without renewal; a dead worker's run is retried after it. */
  runLeaseSeconds: number;
  /** Claims of one run before it is failed (each crash or lost lease uses one). */
  runMaxAttempts: number;
  /** Idle workers look for queued runs this often, besides waking on LISTEN/NOTIFY. */
  workerPollMs: number;
  /** Lets callbacks reach loopback, private and link-local addresses (tests, trusted networks). */
  callbackAllowPrivateNetworks: boolean;
  /** Delay before the first callback retry; each further retry doubles it. */
  callbackBackoffMs: number;
  /** 32-byte key (base64) that encrypts signing secrets at rest; unset: a key file in DATA_DIR. */
  signingSecretsKey: Buffer | undefined;
  /** How long a rotated-out signing secret keeps signing beside the new one. */
  signingSecretGraceSeconds: number;
}

/** A setting that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === "" ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got an unparsable value`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(" or ")}, got "${parsed.protocol}"`);
  }
  return raw;
}

function roles(env: Env): ReadonlySet<Role> {
  const raw = text(env, "DOCPIPE_ROLES") ?? "edge,services,worker";
  const parts = raw.split(",").map((part) => part.trim());
  for (const part of parts) {
    if (part !== "edge" && part !== "services" && part !== "worker") {
      throw new ConfigError(`DOCPIPE_ROLES must list edge, services and/or worker, got "${part}"`);
    }
  }
  return new Set(parts as Role[]);
}

function plans(env: Env): Record<string, number> {
  const raw = text(env, "PLANS");
  if (raw === undefined) return { ...DEFAULT_PLANS };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('PLANS must be a JSON object such as {"unlimited":0}, got invalid JSON');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('PLANS must be a JSON object such as {"unlimited":0}');
  }
  for (const [plan, limit] of Object.entries(parsed)) {
    if (!/^[a-z][a-z0-9_-]{0,39}$/.test(plan) || !Number.isInteger(limit) || (limit as number) < 0) {
      throw new ConfigError(`PLANS: plan "${plan}" needs a lowercase id and a whole number of requests per minute (0 = unlimited)`);
    }
  }
  return { ...DEFAULT_PLANS, ...(parsed as Record<string, number>) };
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

/** Reads every setting once, with defaults; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(text(env, "DATA_DIR") ?? "data");
  const databaseUrl = url(env, "DATABASE_URL", ["postgres:", "postgresql:"]);
  const internalHost = text(env, "INTERNAL_HOST") ?? "127.0.0.1";
  const internalToken = text(env, "INTERNAL_TOKEN");
  if (!isLoopback(internalHost) && internalToken === undefined) {
    throw new ConfigError(`INTERNAL_TOKEN must be set when INTERNAL_HOST ("${internalHost}") is not a loopback address`);
  }
  const keyPrefix = text(env, "KEY_PREFIX") ?? "dp";
  if (!/^[a-z][a-z0-9]{0,9}$/.test(keyPrefix)) {
    throw new ConfigError(`KEY_PREFIX must be 1..10 lowercase letters or digits, starting with a letter, got "${keyPrefix}"`);
  }
  return {
    host: text(env, "HOST") ?? "0.0.0.0",
    port: integer(env, "PORT", 8080, 0, 65535),
    internalHost,
    internalPort: integer(env, "INTERNAL_PORT", 8081, 0, 65535),
    internalToken,
    roles: roles(env),
    servicesUrl: url(env, "SERVICES_URL", ["http:", "https:"]),
    databaseUrl,
    dataDir,
    embeddedPostgresPort: integer(env, "EMBEDDED_POSTGRES_PORT", 54329, 1, 65535),
    storageDir: resolve(text(env, "STORAGE_DIR") ?? resolve(dataDir, "files")),
    redisUrl: url(env, "REDIS_URL", ["redis:", "rediss:"]),
    keyPrefix,
    plans: plans(env),
    maxSizeMbLimit: integer(env, "MAX_SIZE_MB_LIMIT", 100, 1, 102400),
    pageTokenSecret: text(env, "PAGE_TOKEN_SECRET"),
    keyCacheMs: integer(env, "KEY_CACHE_MS", 1000, 0, 60_000),
    seedDemo: boolean(env, "SEED_DEMO", databaseUrl === undefined),
    logLevel: text(env, "LOG_LEVEL") ?? "info",
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 10000, 0, 600000),
    workerConcurrency: integer(env, "WORKER_CONCURRENCY", 4, 1, 256),
    runLeaseSeconds: integer(env, "RUN_LEASE_SECONDS", 30, 1, 3600),
    runMaxAttempts: integer(env, "RUN_MAX_ATTEMPTS", 5, 1, 100),
    workerPollMs: integer(env, "WORKER_POLL_MS", 1000, 10, 60000),
    callbackAllowPrivateNetworks: boolean(env, "CALLBACK_ALLOW_PRIVATE_NETWORKS", false),
    callbackBackoffMs: integer(env, "CALLBACK_BACKOFF_MS", 1000, 0, 600000),
    signingSecretsKey: encryptionKey(env, "SIGNING_SECRETS_KEY"),
    signingSecretGraceSeconds: integer(env, "SIGNING_SECRET_GRACE_SECONDS", 86400, 0, 30 * 86400),
  };
}

function encryptionKey(env: Env, name: string): Buffer | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  const key = Buffer.from(raw, "base64");
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes in base64 (openssl rand -base64 32)`);
  return key;
}
