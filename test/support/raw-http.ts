/** HTTP/1.1 spoken by hand, for requests Node's client refuses to send. */
import { connect } from "node:net";

/** One response: its status, lower-case headers and body. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Writes `bytes`, half-closes, and collects everything the server sends until it closes. */
export function sendRaw(base: string, bytes: Buffer): Promise<Buffer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error("the server neither answered nor closed within 5 s")));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks)));
    // A reset after the answer is fine: the answer is what is judged.
    socket.on("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNRESET" || error.code === "EPIPE" ? undefined : reject(error)));
    socket.end(bytes);
  });
}

/** The responses in a raw byte stream, in order; they all carry Content-Length or no body (so none answers a HEAD). */
export function parseResponses(raw: Buffer): Answer[] {
  const answers: Answer[] = [];
  let offset = 0;
  while (offset < raw.length) {
    const headEnd = raw.indexOf("\r\n\r\n", offset);
    if (headEnd === -1) throw new Error(`unparseable response bytes: ${JSON.stringify(raw.subarray(offset, offset + 200).toString("latin1"))}`);
    const [statusLine, ...lines] = raw.subarray(offset, headEnd).toString("latin1").split("\r\n");
    const status = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine!);
    if (status === null) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
    const length = Number(headers["content-length"] ?? 0);
    answers.push({ status: Number(status[1]), headers, body: raw.subarray(headEnd + 4, headEnd + 4 + length) });
    offset = headEnd + 4 + length;
  }
  return answers;
}
