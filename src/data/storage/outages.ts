/**
 * Which storage errors are the server's passing trouble, worth a 503 and a retry, rather than a
 * fault (a 500, logged as an error): anything else, such as an S3 AccessDenied or a missing bucket,
 * is a misconfiguration a retry cannot mend.
 */

/** The file system is full, over quota, failing or out of descriptors. */
const FILE_SYSTEM_OUTAGES = new Set(["ENOSPC", "EDQUOT", "EIO", "EMFILE", "ENFILE", "EROFS"]);

/** The object store cannot be reached. */
const NETWORK_OUTAGES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

interface StorageError {
  code?: string;
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

/** An error of the staging folder (or the folder store) that another attempt may not meet. */
export function isFileSystemOutage(error: unknown): boolean {
  const { code } = (error ?? {}) as StorageError;
  return code !== undefined && FILE_SYSTEM_OUTAGES.has(code);
}

/** An error storing a document that another attempt may not meet: the file system's, the network's, or the object store's 5xx, 429 and timeouts. */
export function isStorageOutage(error: unknown): boolean {
  if (isFileSystemOutage(error)) return true;
  const { code, name, $metadata } = (error ?? {}) as StorageError;
  if (code !== undefined && NETWORK_OUTAGES.has(code)) return true;
  const status = $metadata?.httpStatusCode;
  return (status !== undefined && (status >= 500 || status === 429)) || name === "TimeoutError" || name === "SlowDown";
}
