import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createDualProtocolServer, type DualProtocolServer, type DualProtocolServerOptions } from "../../src/inbound/rpc/dual-protocol-server.ts";

type Handler = Parameters<typeof createDualProtocolServer>[0];

/** Answers "<method> <path> over <http version>"; /slow answers after 300 ms. */
const handler: Handler = (request, response) => {
  const body = `${request.method} ${request.url} over ${request.httpVersion}`;
  const end = () => (response as http.ServerResponse).end(body);
  if (request.url === "/slow") setTimeout(end, 300);
  else end();
};

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options?: DualProtocolServerOptions): Promise<{ server: DualProtocolServer; port: number }> {
  const server = createDualProtocolServer(handler, options);
  const port = await server.listen(0, "127.0.0.1");
  let closed = false;
  cleanups.push(() => closed || server.close(1000));
  const close = server.close;
  server.close = (timeoutMs) => ((closed = true), close(timeoutMs));
  return { server, port };
}

/** Writes each piece as its own TCP segment, `gapMs` apart, and returns everything read until the server ends. */
function rawExchange(port: number, pieces: string[], gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", noDelay: true });
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(received).toString()));
    socket.once("connect", async () => {
      for (const [index, piece] of pieces.entries()) {
        if (index > 0) await sleep(gapMs);
        socket.write(piece);
      }
    });
  });
}

function h1Get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, agent }, (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, body }));
        response.on("error", reject);
      })
      .on("error", reject);
  });
}

function h2Get(session: http2.ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path });
    let status = 0;
    let body = "";
    stream.setEncoding("utf8");
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("end", () => resolve({ status, body }));
    stream.on("error", reject);
  });
}

function h2Connect(url: string, options: http2.ClientSessionOptions = {}): http2.ClientHttp2Session {
  const session = http2.connect(url, options);
  session.on("error", () => {});
  cleanups.push(() => session.destroy());
  return session;
}

describe("dual-protocol server: protocol detection", () => {
  it("routes an HTTP/1.1 request whose first TCP segment is only 'P' to HTTP/1.1", async () => {
    const { port } = await start();
    const response = await rawExchange(port, ["P", "OST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"], 50);
    expect(response).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(response).toContain("POST /p over 1.1");
  });

  it("routes a method sharing two bytes with the preface ('PR' + 'OPFIND') to HTTP/1.1", async () => {
    const { port } = await start();
    const response = await rawExchange(port, ["PR", "OPFIND /dav HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"], 50);
    expect(response).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(response).toContain("PROPFIND /dav over 1.1");
  });

  it("serves HTTP/1.1 sent in one segment, with keep-alive", async () => {
    const { port } = await start();
    const agent = new http.Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    expect(await h1Get(port, "/a", agent)).toEqual({ status: 200, body: "GET /a over 1.1" });
    expect(await h1Get(port, "/b", agent)).toEqual({ status: 200, body: "GET /b over 1.1" });
  });

  it("serves HTTP/2 with prior knowledge", async () => {
    const { port } = await start();
    const session = h2Connect(`http://127.0.0.1:${port}`);
    expect(await h2Get(session, "/x")).toEqual({ status: 200, body: "GET /x over 2.0" });
    expect(await h2Get(session, "/y")).toEqual({ status: 200, body: "GET /y over 2.0" });
  });

  it("serves HTTP/2 whose preface arrives split across several segments", async () => {
    const { port } = await start();
    // A proxy that forwards the client's first write in small pieces, 30 ms apart, then relays as is.
    const cuts = [1, 3, 9, 17, 23, 24];
    const proxy = net.createServer((downstream) => {
      const upstream = net.connect({ port, host: "127.0.0.1", noDelay: true });
      upstream.on("error", () => downstream.destroy());
      downstream.on("error", () => upstream.destroy());
      upstream.pipe(downstream);
      downstream.once("data", async (first: Buffer) => {
        downstream.pause();
        expect(first.length).toBeGreaterThan(24);
        let from = 0;
        for (const cut of [...cuts, first.length]) {
          upstream.write(first.subarray(from, cut));
          from = cut;
          await sleep(30);
        }
        downstream.pipe(upstream);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
    const session = h2Connect(`http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`);
    expect(await h2Get(session, "/split")).toEqual({ status: 200, body: "GET /split over 2.0" });
  });

  it("closes a connection that sends nothing once the detection timeout passes", async () => {
    const { port } = await start({ protocolDetectionTimeoutMs: 200 });
    const started = performance.now();
    expect(await rawExchange(port, [], 0)).toBe("");
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(2000);
  });

  it("closes a connection stuck on a preface prefix once the detection timeout passes", async () => {
    const { port } = await start({ protocolDetectionTimeoutMs: 200 });
    const started = performance.now();
    // Bytes keep coming, but never enough to decide: the timeout counts from accept.
    expect(await rawExchange(port, ["PRI", " * ", "HTTP"], 80)).toBe("");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("forgets a connection that closes before the protocol is known", async () => {
    const { server, port } = await start();
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect({ port, host: "127.0.0.1" }, () => socket.end("PRI * "));
      socket.on("error", reject);
      socket.on("close", () => resolve());
      socket.resume();
    });
    const started = performance.now();
    await server.close(3000);
    // At once, not after the 3 s timeout; the bound leaves a loaded machine room.
    expect(performance.now() - started).toBeLessThan(1500);
  });
});

describe("dual-protocol server: close()", () => {
  it("closes idle HTTP/1.1 keep-alive connections and idle HTTP/2 sessions at once", async () => {
    const { server, port } = await start();
    const agent = new http.Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    expect((await h1Get(port, "/", agent)).status).toBe(200);
    const session = h2Connect(`http://127.0.0.1:${port}`);
    expect((await h2Get(session, "/")).status).toBe(200);
    const sessionClosed = new Promise<void>((resolve) => session.once("close", () => resolve()));

    const started = performance.now();
    await server.close(3000);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(1500); // at once, not after the 3 s timeout
    await sessionClosed;
  });

  it("lets an in-flight HTTP/1.1 request finish with its response", async () => {
    const { server, port } = await start();
    const agent = new http.Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    const response = h1Get(port, "/slow", agent);
    await sleep(100); // the request has reached the handler, which answers 200 ms later

    const started = performance.now();
    await server.close(3000);
    const elapsed = performance.now() - started;
    expect(await response).toEqual({ status: 200, body: "GET /slow over 1.1" });
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(1000);
  });

  it("lets an in-flight HTTP/2 request finish with its response", async () => {
    const { server, port } = await start();
    const session = h2Connect(`http://127.0.0.1:${port}`);
    const response = h2Get(session, "/slow");
    await sleep(100);

    const started = performance.now();
    await server.close(3000);
    expect(await response).toEqual({ status: 200, body: "GET /slow over 2.0" });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("destroys connections still busy when the timeout passes", async () => {
    const { server, port } = await start();
    const response = h1Get(port, "/slow");
    response.catch(() => {});
    await sleep(50);
    const started = performance.now();
    await server.close(100);
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(response).rejects.toThrow();
  });

  it("refuses new connections after close()", async () => {
    const { server, port } = await start();
    await server.close(1000);
    await expect(h1Get(port, "/")).rejects.toThrow(/ECONNREFUSED/);
  });
});
