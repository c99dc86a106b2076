import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

type Handler = (request: http.IncomingMessage | http2.Http2ServerRequest, response: http.ServerResponse | http2.Http2ServerResponse) => void;

/** Prior-knowledge HTTP/2 connections open with this preface (RFC 9113, section 3.4). */
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface DualProtocolServer {
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets in-flight requests finish, then closes every connection. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Cleartext HTTP/1.1 and HTTP/2 on one port. Node's cleartext HTTP/2 server cannot fall back to
 * HTTP/1.1, so each connection's first bytes decide which server gets it.
 */
export function createDualProtocolServer(handler: Handler): DualProtocolServer {
  const h1 = http.createServer(handler);
  const h2 = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.once("data", (chunk: Buffer) => {
      const prefix = HTTP2_PREFACE.subarray(0, Math.min(chunk.length, HTTP2_PREFACE.length));
      if (chunk.subarray(0, prefix.length).equals(prefix)) {
        socket.pause();
        socket.unshift(chunk);
        h2.emit("connection", socket);
      } else {
        // The HTTP/1 parser reads the socket's handle directly from now on, so the chunk already
        // read is handed to it as the socket's first data event.
        h1.emit("connection", socket);
        socket.emit("data", chunk);
      }
    });
  });

  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        front.once("error", reject);
        front.listen(port, host, () => resolve((front.address() as net.AddressInfo).port));
      }),
    close: async (timeoutMs) => {
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      h1.closeIdleConnections();
      for (const session of sessions) session.close();
      const deadline = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, timeoutMs);
      // HTTP/1.1 connections that were busy become idle when their request ends.
      const idle = setInterval(() => h1.closeIdleConnections(), 50);
      await closed;
      clearTimeout(deadline);
      clearInterval(idle);
    },
  };
}
