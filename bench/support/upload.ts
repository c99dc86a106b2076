import { request } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { MULTIPART_CONTENT_TYPE, multipartLength, streamedMultipartBody } from "./multipart.ts";

export interface StreamedUpload {
  /** 0 when no response arrived. */
  status: number;
  /** The problem document's `code`, when the response is one. */
  code: string | undefined;
  /** Bytes this client wrote to its socket before the exchange ended. */
  bytesSent: number;
  /** The socket error, if one ended the exchange before a response. */
  error: string | undefined;
  /** The client's port, to find the connection on the server's side. */
  localPort: number;
}

/**
 * POSTs a multipart body with a `fileSize`-byte file, generated as it is sent (a 100 MB upload
 * holds no 100 MB buffer), and keeps sending until the response is complete or the socket fails,
 * like an ordinary client that does not watch for an early answer.
 */
export function uploadStreamed(url: string, headers: Record<string, string>, fileSize: number): Promise<StreamedUpload> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: "POST",
      headers: { ...headers, "content-type": MULTIPART_CONTENT_TYPE, "content-length": multipartLength(fileSize) },
    });
    const ended = (status: number, code: string | undefined, error: string | undefined) =>
      resolve({ status, code, error, bytesSent: req.socket?.bytesWritten ?? 0, localPort: req.socket?.localPort ?? 0 });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        const code = res.headers["content-type"]?.startsWith("application/problem+json") ? (JSON.parse(text) as { code?: string }).code : undefined;
        ended(res.statusCode ?? 0, code, undefined);
      });
      res.on("error", (error: NodeJS.ErrnoException) => ended(0, undefined, error.code ?? error.message));
    });
    req.on("error", (error: NodeJS.ErrnoException) => ended(0, undefined, error.code ?? error.message));
    // A refused upload ends in a write error once the server closes; the response (or its loss) is what counts.
    pipeline(Readable.from(streamedMultipartBody(fileSize)), req).catch(() => {});
  });
}
