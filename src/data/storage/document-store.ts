import { isSha256Hex, isUuid } from "../../platform/ids.ts";
import type { StagedFile } from "./staging.ts";

export type { StagedFile } from "./staging.ts";
export { FileTooLargeError } from "./staging.ts";

/** A stored document: its organization and content address. */
export interface StoredDocument {
  organizationId: string;
  sha256: string;
}

/** A stored document as a file on this machine, for a task that reads it by path; released after use. */
export interface LocalCopy {
  path: string;
  release(): Promise<void>;
}

/** The document is not in the store (the ENOENT code lets readers treat both stores alike). */
export class DocumentMissingError extends Error {
  override name = "DocumentMissingError";
  readonly code = "ENOENT";
}

/**
 * Where accepted documents live, per organization and content address (`<organizationId>/<sha256>`):
 * a run can only name bytes its own organization uploaded, because a worker reads a run's file from
 * that run's organization alone. Uploads are staged and hashed on the receiving process's disk,
 * then stored under their final name all at once: a reader never sees half a document.
 */
export interface DocumentStore {
  /** Creates what the store needs (folders); checks nothing remote. */
  init(): Promise<void>;
  stage(source: AsyncIterable<Buffer | string>, maxBytes: number, inspect?: (chunk: Buffer) => void): Promise<StagedFile>;
  /** Removes a staged file that will not be committed. */
  discard(staged: StagedFile): Promise<void>;
  /**
   * Stores a staged file under `<organizationId>/<sha256>` and removes the staged copy. Bytes already
   * stored there stay and count as just stored, so the orphan sweeper's grace period starts again.
   */
  commit(organizationId: string, staged: StagedFile): Promise<void>;
  /** The stored bytes; rejects with DocumentMissingError when there are none. */
  open(document: StoredDocument): Promise<AsyncIterable<Buffer>>;
  /**
   * The stored bytes as a local file: the stored file itself for a folder store, a temporary download
   * for object storage. A missing document is reported by whoever reads the path.
   */
  localCopy(document: StoredDocument): Promise<LocalCopy>;
  /** Every stored document with the time it was last stored. */
  committed(): AsyncIterable<StoredDocument & { modifiedMs: number }>;
  /**
   * Removes a stored document only if it was last stored before `beforeMs`, deciding at the moment
   * of removal, so a commit of the same bytes racing the orphan sweeper keeps them. Returns whether it removed them.
   */
  removeIfOlder(document: StoredDocument, beforeMs: number): Promise<boolean>;
  /** Removes staged files older than `beforeMs`; returns how many. */
  removeStagedBefore(beforeMs: number): Promise<number>;
  close(): Promise<void>;
}

/** A UUID in lowercase, as ids are written: a path or key made of it has one spelling only. */
function isOrganizationId(value: string): boolean {
  return isUuid(value) && value === value.toLowerCase();
}

/** Refuses names that are not an organization id and a sha256 (they become paths and object keys). */
export function checkDocument(organizationId: string, sha256: string): void {
  if (!isOrganizationId(organizationId)) throw new Error(`not an organization id: ${JSON.stringify(organizationId.slice(0, 64))}`);
  if (!isSha256Hex(sha256)) throw new Error(`not a sha256: ${JSON.stringify(sha256.slice(0, 80))}`);
}

export function isDocumentName(organizationId: string, sha256: string): boolean {
  return isOrganizationId(organizationId) && isSha256Hex(sha256);
}
