import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals signing secrets with AES-256-GCM under a key kept outside the database, so a database dump
 * or backup alone does not reveal them. The organization id is bound in as associated data: a sealed
 * value copied to another organization's row does not open.
 */
export class SecretBox {
  /** Imported once: a cipher made from raw key bytes imports them each time, three quarters of an open's cost. */
  readonly #key: KeyObject;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("SecretBox needs a 32-byte key");
    this.#key = createSecretKey(key);
  }

  seal(plaintext: string, organizationId: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(organizationId));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, organizationId: string): string {
    if (sealed[0] !== VERSION) throw new Error("sealed secret has an unknown format version");
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv("aes-256-gcm", this.#key, iv);
    decipher.setAAD(Buffer.from(organizationId));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  }
}

/**
 * The configured key (SIGNING_SECRETS_KEY), or else one kept in <dataDir>/signing-secrets.key (mode
 * 0600), made on first use. Several machines sharing a database must configure the same key.
 */
export async function loadSecretsKey(configured: Buffer | undefined, dataDir: string): Promise<Buffer> {
  if (configured !== undefined) return configured;
  const path = join(dataDir, "signing-secrets.key");
  await mkdir(dataDir, { recursive: true });
  // Written aside, then linked into place: two processes starting together agree on one whole key.
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(temp, randomBytes(32).toString("base64"), { mode: 0o600 });
  try {
    await link(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    await unlink(temp);
  }
  const key = Buffer.from((await readFile(path, "utf8")).trim(), "base64");
  if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte base64 key`);
  return key;
}

type KeySettings = { signingSecretsKey: Buffer | undefined; dataDir: string };

/** The box of each configuration: the services, the worker and its delivery queue of one process share one. */
const boxes = new WeakMap<KeySettings, () => Promise<SecretBox>>();

/**
 * A SecretBox made on first use from SIGNING_SECRETS_KEY or the key file, then shared by every
 * caller with the same configuration. A failed load (the data folder briefly unreadable) is not
 * kept: the next call tries again.
 */
export function lazySecretBox(config: KeySettings, loadKey: typeof loadSecretsKey = loadSecretsKey): () => Promise<SecretBox> {
  const shared = loadKey === loadSecretsKey ? boxes.get(config) : undefined;
  if (shared !== undefined) return shared;
  let box: Promise<SecretBox> | undefined;
  const open = () =>
    (box ??= loadKey(config.signingSecretsKey, config.dataDir).then(
      (key) => new SecretBox(key),
      (error: unknown) => {
        box = undefined;
        throw error;
      },
    ));
  if (loadKey === loadSecretsKey) boxes.set(config, open);
  return open;
}
