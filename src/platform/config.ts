import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import ipaddr from "ipaddr.js";

/** Requests per minute per API key for each plan; 0 means unlimited. */
export const DEFAULT_PLANS: Readonly<Record<string, number>> = {
  free: 10,
  basic: 60,
  standard: 300,
  advanced: 1000,
};

type Role = "edge" | "services" | "worker" | "email";

export interface Config {
  /** Public REST edge. */
  host: string;
  port: number;
  /** Internal Connect services. */
  internalHost: string;
  internalPort: number;
  internalToken: string | undefined;
  /** /metrics, /healthz and /readyz on INTERNAL_HOST for a process without the internal services; unset: none. */
  metricsPort: number | undefined;
  /** Counting for /metrics; off only to measure what counting costs. */
  metricsEnabled: boolean;
  /** Guards TriggerService apart from the management services; INTERNAL_TOKEN when unset. */
  triggerToken: string | undefined;
  /** Host names the internal port answers (against DNS rebinding); "*" allows any. */
  internalAllowedHosts: readonly string[];
  /** What this process runs. */
  roles: ReadonlySet<Role>;
  /** When set, the edge calls the Connect services at this URL instead of in-process. */
  servicesUrl: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Unset: the embedded server's usual port, or one the system picks while that one is taken. */
  embeddedPostgresPort: number | undefined;
  storageDir: string;
  /** `s3://bucket/prefix`: documents in S3-compatible storage instead of STORAGE_DIR. */
  storageUrl: string | undefined;
  redisUrl: string | undefined;
  keyPrefix: string;
  plans: Readonly<Record<string, number>>;
  maxSizeMbLimit: number;
  pageTokenSecret: string | undefined;
  /**
   * Which peers' X-Forwarded-For the edge believes when it tells clients apart (failed-authentication
   * limits): false (none: the peer's address counts), a number of proxy hops, or proxy addresses/CIDRs.
   */
  trustProxy: false | number | string[];
  /** Failed authentications one client address may make per minute before it gets 429; 0 turns the limit off. */
  authFailuresPerMinute: number;
  /** How long AuthenticateKey reuses a key's stored credentials (ms); 0 reads them on every request. */
  keyCacheMs: number;
  seedDemo: boolean;
  logLevel: string;
  shutdownTimeoutMs: number;
  /** Runs one worker process executes at a time. */
  workerConcurrency: number;
  /** Runs one organization may hold running at once across every worker; the rest wait their turn. */
  maxSlotsPerOrganization: number;
  /** How long a claimed run stays leased without renewal; a dead worker's run is retried after it. */
  runLeaseSeconds: number;
  /** Claims of one run before it is failed (each crash or lost lease uses one). */
  runMaxAttempts: number;
  /** Processes of the task pool that parses documents apart from the event loop serving HTTP. */
  taskPoolSize: number;
  /** Time budget of one parse (ms); past it the parse is stopped and its step fails with parse_timeout. */
  parseTimeoutMs: number;
  /** Memory budget of one parse (MB of the parsing process); past it the step fails with parse_memory_exceeded. */
  parseMemoryMb: number;
  /** A parse process that keeps more than this (MB) over its memory at start after a document is replaced before the next one. */
  parseRecycleMb: number;
  /** Most parts a split node may cut one document into; past it the step fails with split_too_many_parts. */
  splitMaxParts: number;
  /**
   * The first user and group ids of the 65,536 that parse processes run as when the service runs as
   * root, each process its own (src/documents/pool/confinement.ts); ids no account uses (default 2,000,000,000).
   */
  parseUser: { uid: number; gid: number };
  /** Idle workers look for queued runs this often, besides waking on LISTEN/NOTIFY. */
  workerPollMs: number;
  /** Lets callbacks reach loopback, private and link-local addresses (tests, trusted networks). */
  callbackAllowPrivateNetworks: boolean;
  /** Delay before the first callback retry; each further retry waits four times longer, up to 8 hours. */
  callbackBackoffMs: number;
  /** Callback attempts one worker process makes at a time, apart from its run slots. */
  callbackConcurrency: number;
  /** 32-byte key (base64) that encrypts signing secrets at rest; unset: a key file in DATA_DIR. */
  signingSecretsKey: Buffer | undefined;
  /** How long a rotated-out signing secret keeps signing beside the new one. */
  signingSecretGraceSeconds: number;
  /** Where email nodes send mail (smtp:// or smtps://, credentials in the URL); unset: email nodes fail with email_failed. */
  smtpUrl: string | undefined;
  /** The From address of mail email nodes send. */
  smtpFrom: string;
  /** The SMTP server of email triggers listens here (with the edge or email role); unset: no email trigger. */
  emailPort: number | undefined;
  emailHost: string;
  /** The domain email triggers receive for: mail to <pipe id>@EMAIL_DOMAIN. */
  emailDomain: string;
  /** SMTP connections open at once; past it a new one gets 421. */
  emailMaxConnections: number;
  /** SMTP connections open at once from one client address (IPv6 by its /64); past it a new one gets 421. */
  emailMaxConnectionsPerAddress: number;
  /** An SMTP session ends (421) this long after it connected, however busy. */
  emailSessionMaxSeconds: number;
  /** An SMTP session ends (421) after this long without a command that moves a message on (NOOP, RSET, HELP, VRFY do not). */
  emailIdleSeconds: number;
  /** Commands one SMTP connection may send, NOOP included; the next is answered 421 and the connection closed. */
  emailMaxCommandsPerConnection: number;
  /** Attachments one message may carry; past it the message gets 552 and makes no run. */
  emailMaxAttachments: number;
  /** Runs one organization may have queued or running at once, from every source; past it a new one is refused. */
  maxQueuedRunsPerOrganization: number;
  /** Anonymous RPCs (SignIn, AcceptInvitation, the OIDC callback) running at once; the rest wait, apart from the shared pool. */
  signInConcurrency: number;
  /** Anonymous RPCs that may wait for SIGN_IN_CONCURRENCY; past it the next is refused at once. */
  signInQueue: number;
  /** A console session ends after this long without a call. */
  sessionIdleMinutes: number;
  /** A console session ends this long after sign-in, however active. */
  sessionMaxHours: number;
  /** The session cookie carries Secure; set it when the console is served over HTTPS by a proxy (a request over HTTPS always gets it). */
  sessionCookieSecure: boolean;
  /** Failed sign-ins one account may have per 15 minutes before further attempts are refused. */
  signInFailuresPerAccount: number;
  /** Failed sign-ins one client address may make per 15 minutes before further attempts are refused. */
  signInFailuresPerAddress: number;
  /** Days the audit log keeps an event. */
  auditRetentionDays: number;
  /** Single sign-on with OpenID Connect, when OIDC_ISSUER is set. */
  oidc: OidcSettings | undefined;
}

/** An OpenID provider the console signs people in with (authorization code flow, PKCE). */
export interface OidcSettings {
  /** The issuer URL; its /.well-known/openid-configuration is read on the first sign-in. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Where the provider sends people back: this service's internal port, path /auth/oidc/callback, as the provider has it registered. */
  redirectUrl: string;
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

/** The first id of the users parse processes run as by default: above any account's and any container's subordinate ids. */
const FIRST_PARSE_ID = 2_000_000_000;
/** The highest first id: the pool's 65,536 users (src/documents/pool/confinement.ts) end below 4,294,967,295, which means "no user". */
const LAST_FIRST_PARSE_ID = 4_294_967_294 - 65_535;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(", ")}, got "${raw.slice(0, 40)}"`);
  return raw as T;
}

function storageUrl(env: Env): string | undefined {
  const raw = url(env, "STORAGE_URL", ["s3:"]);
  if (raw !== undefined && new URL(raw).hostname === "") throw new ConfigError("STORAGE_URL must look like s3://bucket or s3://bucket/prefix");
  return raw;
}

function roles(env: Env): ReadonlySet<Role> {
  const raw = text(env, "DOCPIPE_ROLES") ?? "edge,services,worker";
  const parts = raw.split(",").map((part) => part.trim());
  for (const part of parts) {
    if (part !== "edge" && part !== "services" && part !== "worker" && part !== "email") {
      throw new ConfigError(`DOCPIPE_ROLES must list edge, services, worker and/or email, got "${part}"`);
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

const HOST_NAME = /^(\*|[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]+\])$/;

/**
 * The Host names the internal port answers: the loopback names, INTERNAL_HOST, and those listed in
 * INTERNAL_ALLOWED_HOSTS (comma-separated names, without ports; "*" turns the check off).
 */
function allowedHosts(env: Env, internalHost: string): string[] {
  const listed = (text(env, "INTERNAL_ALLOWED_HOSTS") ?? "")
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter((host) => host !== "");
  for (const host of listed) {
    if (!HOST_NAME.test(host)) throw new ConfigError(`INTERNAL_ALLOWED_HOSTS must list host names without ports (or *), got "${host}"`);
  }
  const own = internalHost.includes(":") ? `[${internalHost}]` : internalHost;
  return [...new Set(["localhost", "127.0.0.1", "[::1]", own.toLowerCase(), ...listed])];
}

/**
 * TRUST_PROXY: unset or false, a hop count (1..10), or a comma-separated list of proxy addresses and
 * CIDR ranges. "true" (believe any peer) is refused: every client could then pick its own address.
 */
function trustProxy(env: Env): false | number | string[] {
  const raw = text(env, "TRUST_PROXY");
  if (raw === undefined || raw.toLowerCase() === "false") return false;
  if (/^\d+$/.test(raw)) return integer(env, "TRUST_PROXY", 0, 1, 10);
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const valid = entry.includes("/") ? isCidr(entry) : ipaddr.isValid(entry);
    if (!valid) {
      throw new ConfigError(`TRUST_PROXY must be false, a hop count from 1 to 10, or proxy addresses/CIDRs separated by commas; "${entry}" is none of these`);
    }
  }
  return entries;
}

function isCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether INTERNAL_HOST binds loopback only: an IPv4 literal in 127.0.0.0/8, ::1, or exactly
 * "localhost". Any other name may resolve anywhere ("127.evil.example" is a name, not an address).
 */
function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  // isIP accepts only the plain forms (no "127.1", no hexadecimal parts), as the bind itself reads them.
  return isIP(host) !== 0 && ipaddr.parse(host).range() === "loopback";
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
  const emailDomain = (text(env, "EMAIL_DOMAIN") ?? "localhost").toLowerCase();
  if (!HOST_NAME.test(emailDomain) || emailDomain === "*") throw new ConfigError(`EMAIL_DOMAIN must be a domain name, got "${emailDomain.slice(0, 100)}"`);
  const keyPrefix = text(env, "KEY_PREFIX") ?? "dp";
  if (!/^[a-z][a-z0-9]{0,9}$/.test(keyPrefix)) {
    throw new ConfigError(`KEY_PREFIX must be 1..10 lowercase letters or digits, starting with a letter, got "${keyPrefix}"`);
  }
  const workerConcurrency = integer(env, "WORKER_CONCURRENCY", 4, 1, 256);
  const processRoles = roles(env);
  if (processRoles.has("email") && text(env, "EMAIL_PORT") === undefined)
    throw new ConfigError("DOCPIPE_ROLES includes email: set EMAIL_PORT, where its SMTP server listens");
  return {
    host: text(env, "HOST") ?? "0.0.0.0",
    port: integer(env, "PORT", 8080, 0, 65535),
    internalHost,
    internalPort: integer(env, "INTERNAL_PORT", 8081, 0, 65535),
    internalToken,
    metricsPort: text(env, "METRICS_PORT") === undefined ? undefined : integer(env, "METRICS_PORT", 0, 0, 65535),
    metricsEnabled: boolean(env, "METRICS_ENABLED", true),
    triggerToken: text(env, "TRIGGER_TOKEN"),
    internalAllowedHosts: allowedHosts(env, internalHost),
    roles: processRoles,
    servicesUrl: url(env, "SERVICES_URL", ["http:", "https:"]),
    databaseUrl,
    dataDir,
    embeddedPostgresPort: text(env, "EMBEDDED_POSTGRES_PORT") === undefined ? undefined : integer(env, "EMBEDDED_POSTGRES_PORT", 0, 1, 65535),
    storageDir: resolve(text(env, "STORAGE_DIR") ?? resolve(dataDir, "files")),
    storageUrl: storageUrl(env),
    redisUrl: url(env, "REDIS_URL", ["redis:", "rediss:"]),
    keyPrefix,
    plans: plans(env),
    maxSizeMbLimit: integer(env, "MAX_SIZE_MB_LIMIT", 100, 1, 102400),
    pageTokenSecret: text(env, "PAGE_TOKEN_SECRET"),
    trustProxy: trustProxy(env),
    authFailuresPerMinute: integer(env, "AUTH_FAILURES_PER_MINUTE", 60, 0, 1_000_000),
    keyCacheMs: integer(env, "KEY_CACHE_MS", 1000, 0, 60_000),
    seedDemo: boolean(env, "SEED_DEMO", databaseUrl === undefined),
    logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 10000, 0, 600000),
    workerConcurrency,
    maxSlotsPerOrganization: integer(env, "MAX_SLOTS_PER_ORGANIZATION", Math.ceil(workerConcurrency / 2), 1, 100_000),
    runLeaseSeconds: integer(env, "RUN_LEASE_SECONDS", 30, 1, 3600),
    runMaxAttempts: integer(env, "RUN_MAX_ATTEMPTS", 5, 1, 100),
    taskPoolSize: integer(env, "TASK_POOL_SIZE", Math.max(1, availableParallelism() - 1), 1, 256),
    parseTimeoutMs: integer(env, "PARSE_TIMEOUT_MS", 60_000, 100, 3_600_000),
    parseMemoryMb: integer(env, "PARSE_MEMORY_MB", 512, 256, 65_536),
    parseRecycleMb: integer(env, "PARSE_RECYCLE_MB", 64, 0, 65_536),
    splitMaxParts: integer(env, "SPLIT_MAX_PARTS", 100, 1, 1000),
    parseUser: {
      uid: integer(env, "PARSE_UID", FIRST_PARSE_ID, 1, LAST_FIRST_PARSE_ID),
      gid: integer(env, "PARSE_GID", FIRST_PARSE_ID, 1, LAST_FIRST_PARSE_ID),
    },
    workerPollMs: integer(env, "WORKER_POLL_MS", 1000, 10, 60000),
    callbackAllowPrivateNetworks: boolean(env, "CALLBACK_ALLOW_PRIVATE_NETWORKS", false),
    callbackBackoffMs: integer(env, "CALLBACK_BACKOFF_MS", 5000, 0, 600000),
    callbackConcurrency: integer(env, "CALLBACK_CONCURRENCY", 16, 1, 1024),
    signingSecretsKey: encryptionKey(env, "SIGNING_SECRETS_KEY"),
    signingSecretGraceSeconds: integer(env, "SIGNING_SECRET_GRACE_SECONDS", 86400, 0, 30 * 86400),
    smtpUrl: url(env, "SMTP_URL", ["smtp:", "smtps:"]),
    smtpFrom: text(env, "SMTP_FROM") ?? `docpipe@${emailDomain}`,
    emailPort: text(env, "EMAIL_PORT") === undefined ? undefined : integer(env, "EMAIL_PORT", 0, 0, 65535),
    emailHost: text(env, "EMAIL_HOST") ?? "0.0.0.0",
    emailDomain,
    emailMaxConnections: integer(env, "EMAIL_MAX_CONNECTIONS", 200, 1, 100_000),
    emailMaxConnectionsPerAddress: integer(env, "EMAIL_MAX_CONNECTIONS_PER_ADDRESS", 10, 1, 100_000),
    emailSessionMaxSeconds: integer(env, "EMAIL_SESSION_MAX_SECONDS", 600, 1, 86_400),
    emailIdleSeconds: integer(env, "EMAIL_IDLE_SECONDS", 60, 1, 3600),
    emailMaxCommandsPerConnection: integer(env, "EMAIL_MAX_COMMANDS_PER_CONNECTION", 1000, 10, 1_000_000),
    emailMaxAttachments: integer(env, "EMAIL_MAX_ATTACHMENTS", 50, 1, 1000),
    maxQueuedRunsPerOrganization: integer(env, "MAX_QUEUED_RUNS_PER_ORGANIZATION", 10_000, 1, 100_000_000),
    signInConcurrency: integer(env, "SIGN_IN_CONCURRENCY", 2, 1, 64),
    signInQueue: integer(env, "SIGN_IN_QUEUE", 100, 0, 100_000),
    sessionIdleMinutes: integer(env, "SESSION_IDLE_MINUTES", 8 * 60, 1, 30 * 24 * 60),
    sessionMaxHours: integer(env, "SESSION_MAX_HOURS", 7 * 24, 1, 365 * 24),
    sessionCookieSecure: boolean(env, "SESSION_COOKIE_SECURE", false),
    signInFailuresPerAccount: integer(env, "SIGN_IN_FAILURES_PER_ACCOUNT", 5, 1, 1000),
    signInFailuresPerAddress: integer(env, "SIGN_IN_FAILURES_PER_ADDRESS", 20, 1, 100_000),
    auditRetentionDays: integer(env, "AUDIT_RETENTION_DAYS", 90, 1, 3650),
    oidc: oidcSettings(env),
  };
}

/** OIDC_ISSUER and the three settings that go with it, all or none. */
function oidcSettings(env: Env): OidcSettings | undefined {
  const issuer = url(env, "OIDC_ISSUER", ["https:", "http:"]);
  const clientId = text(env, "OIDC_CLIENT_ID");
  const clientSecret = text(env, "OIDC_CLIENT_SECRET");
  const redirectUrl = url(env, "OIDC_REDIRECT_URL", ["https:", "http:"]);
  if (issuer === undefined) {
    if (clientId !== undefined || clientSecret !== undefined || redirectUrl !== undefined) {
      throw new ConfigError("OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_REDIRECT_URL need OIDC_ISSUER");
    }
    return undefined;
  }
  if (clientId === undefined || clientSecret === undefined || redirectUrl === undefined) {
    throw new ConfigError("OIDC_ISSUER needs OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_REDIRECT_URL");
  }
  if (new URL(redirectUrl).pathname !== "/auth/oidc/callback") {
    throw new ConfigError(`OIDC_REDIRECT_URL must end in /auth/oidc/callback (the internal port's callback), got "${redirectUrl}"`);
  }
  // Plain HTTP only on loopback (a provider started on this machine for a trial or a test).
  for (const [name, value] of [
    ["OIDC_ISSUER", issuer],
    ["OIDC_REDIRECT_URL", redirectUrl],
  ] as const) {
    const { protocol, hostname } = new URL(value);
    if (protocol === "http:" && !isLoopback(hostname.replace(/^\[|\]$/g, "")) && hostname !== "localhost") {
      throw new ConfigError(`${name} must use https: unless it is on loopback, got "${value}"`);
    }
  }
  return { issuer, clientId, clientSecret, redirectUrl };
}

function encryptionKey(env: Env, name: string): Buffer | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  const key = Buffer.from(raw, "base64");
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes in base64 (openssl rand -base64 32)`);
  return key;
}
