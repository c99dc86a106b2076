import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

type Handler = (request: http.IncomingMessage | http2.Http2ServerRequest, response: http.ServerResponse | http2.Http2ServerResponse) => void;

/** Prior-knowledge HTTP/2 connections open with this preface (RFC 9113, section 3.4). */
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface DualProtocolServerOptions {
  /**
   * How long a new connection may take to send enough bytes to tell HTTP/1.1 from HTTP/2 (at most the
   * 24-byte HTTP/2 preface; one byte that differs from it is enough for HTTP/1.1). Counted from accept,
   * not reset by activity, so connections that send nothing or trickle bytes cannot pile up.
   * Default 10 000 ms.
   */
  protocolDetectionTimeoutMs?: number;
}

export interface DualProtocolServer {
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets in-flight requests finish, then closes every connection. */
  close(timeoutMs: number): Promise<void>;
}

type Protocol = "http/1.1" | "h2" | undefined;

/** "h2" once all 24 preface bytes arrived, "http/1.1" as soon as one byte differs, undefined while unsure. */
function detectProtocol(received: Buffer): Protocol {
  const length = Math.min(received.length, HTTP2_PREFACE.length);
  if (!received.subarray(0, length).equals(HTTP2_PREFACE.subarray(0, length))) return "http/1.1";
  return length === HTTP2_PREFACE.length ? "h2" : undefined;
}

/**
 * Cleartext HTTP/1.1 and HTTP/2 on one port. Node's cleartext HTTP/2 server cannot fall back to
 * HTTP/1.1, so each connection's first bytes decide which server gets it. Neither `h1` nor `h2`
 * listens itself; `front` accepts and hands sockets over by emitting "connection".
 */
export function createDualProtocolServer(handler: Handler, options: DualProtocolServerOptions = {}): DualProtocolServer {
  const detectionTimeoutMs = options.protocolDetectionTimeoutMs ?? 10_000;
  const h1 = http.createServer(handler);
  const h2 = http2.createServer(handler);
  let closing = false;

  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    // Detected after close() began: finish what the client already sent, accept no more streams.
    if (closing) session.close();
  });

  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));

    let received: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), detectionTimeoutMs);
    const onError = () => {}; // the socket destroys itself on error; this only keeps the error from being thrown
    const onClose = () => clearTimeout(timer);
    const onData = (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const protocol = detectProtocol(received);
      if (protocol === undefined) return;
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("close", onClose);
      if (protocol === "h2") {
        // The HTTP/2 session reads whatever is buffered in the socket before taking over its handle.
        socket.pause();
        socket.unshift(received);
        h2.emit("connection", socket);
      } else {
        // The HTTP/1 parser reads the socket's handle directly from now on, so the bytes already
        // read are handed to it as the socket's first data event.
        h1.emit("connection", socket);
        socket.emit("data", received);
      }
    };
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("close", onClose);
  });

  // Node's HTTP/1 server sets up its connection tracking (which closeIdleConnections() and the
  // headersTimeout/requestTimeout checks rely on) in a "listening" listener, and tears it down in
  // close(). h1 never listens, so it is told when front does; connections must only reach h1 after
  // that, which holds because front accepts none before it listens. This keeps Node's own
  // busy/idle bookkeeping (it knows when a response has finished and the parser is between
  // requests) instead of re-deriving it from request/response events here.
  front.once("listening", () => h1.emit("listening"));

  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        front.once("error", reject);
        front.listen(port, host, () => {
          front.off("error", reject);
          resolve((front.address() as net.AddressInfo).port);
        });
      }),
    close: async (timeoutMs) => {
      closing = true;
      // front's callback runs once every socket it accepted has closed, whichever server took it.
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      h1.closeIdleConnections();
      for (const session of sessions) session.close();
      const deadline = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, timeoutMs);
      // HTTP/1.1 connections that were busy (or still being detected) become idle when their request ends.
      const idle = setInterval(() => h1.closeIdleConnections(), 50);
      await closed;
      clearTimeout(deadline);
      clearInterval(idle);
      // Stops h1's connection-checking interval; it never listened, so the callback gets ERR_SERVER_NOT_RUNNING.
      h1.close(() => {});
    },
  };
}
