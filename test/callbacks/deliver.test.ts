import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { attemptCallback, backoffDelay, type CallbackRequest, sendOnce } from "../../src/runs/deliveries/deliver.ts";
import { signatureHeader } from "../../src/runs/deliveries/signature.ts";
import { verifySignature } from "../support/verify-signature.ts";
import { startReceiver } from "./receiver.ts";

const receiver = await startReceiver();

function request(overrides: Partial<CallbackRequest> = {}): CallbackRequest {
  return {
    url: receiver.url,
    method: "POST",
    headers: {},
    body: '{"runId":"r1"}',
    sign: () => ({}),
    timeoutMs: 2000,
    allowPrivateNetworks: true,
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe("attemptCallback", () => {
  it("sends the body with the method and headers, and reports the 2xx status", async () => {
    receiver.deliveries.length = 0;
    receiver.respond = (_delivery, response) => response.writeHead(204).end();
    const result = await attemptCallback(
      request({ method: "PUT", headers: { "X-Tenant": "acme", "Content-Length": "1" }, sign: () => ({ "X-DocPipe-Signature": "t=1,v1=ab" }) }),
    );
    expect(result).toEqual({ outcome: "delivered", status: 204, error: "" });
    expect(receiver.deliveries[0]).toMatchObject({
      method: "PUT",
      body: '{"runId":"r1"}',
      headers: { "x-tenant": "acme", "content-type": "application/json", "x-docpipe-signature": "t=1,v1=ab" },
    });
  });

  it("reports another status as an HTTP error, and does not follow redirects", async () => {
    receiver.deliveries.length = 0;
    receiver.respond = (_delivery, response) => response.writeHead(302, { location: "http://169.254.169.254/" }).end();
    expect(await attemptCallback(request())).toEqual({ outcome: "http_error", status: 302, error: "HTTP 302" });
    expect(receiver.deliveries).toHaveLength(1);
  });

  it("gives up on an attempt past its timeout", async () => {
    receiver.respond = () => {};
    expect(await attemptCallback(request({ timeoutMs: 100 }))).toEqual({ outcome: "timeout", error: "no answer within 100 ms" });
  });

  it("refuses private addresses unless allowed, without sending anything", async () => {
    receiver.deliveries.length = 0;
    expect(await attemptCallback(request({ allowPrivateNetworks: false }))).toEqual({
      outcome: "refused",
      error: "callback url host 127.0.0.1 is not a public address (an operator may allow private networks: CALLBACK_ALLOW_PRIVATE_NETWORKS=true)",
    });
    expect(await attemptCallback(request({ url: receiver.url.replace("127.0.0.1", "localhost"), allowPrivateNetworks: false }))).toMatchObject({
      outcome: "refused",
      error: expect.stringMatching(/loopback/),
    });
    expect(receiver.deliveries).toHaveLength(0);
  });

  it("refuses a header Node cannot send, which no retry would change, naming the header and not its value", async () => {
    receiver.deliveries.length = 0;
    expect(await attemptCallback(request({ headers: { authorization: "Bearer abc\u20ac" } }))).toEqual({
      outcome: "refused",
      error: 'a header cannot be sent: Invalid character in header content ["authorization"]',
    });
    expect(await attemptCallback(request({ headers: { "bad name": "x" } }))).toEqual({
      outcome: "refused",
      error: 'a header cannot be sent: Header name must be a valid HTTP token ["bad name"]',
    });
    expect(receiver.deliveries).toHaveLength(0);
  });

  it.each([
    ["keeps the connection to a receiver between attempts", () => "answer" as const, { requests: 2, connections: 1 }],
    [
      "sends again on a new connection when the receiver closed the kept one as it was reused",
      // Each connection answers its first request, then is cut when a second one comes on it.
      (requestOnConnection: number) => (requestOnConnection === 1 ? ("answer" as const) : ("cut" as const)),
      { requests: 3, connections: 2 },
    ],
  ])("%s", async (_name, decide, seen) => {
    const server = await rawReceiver(decide);
    const url = `http://127.0.0.1:${server.port}/hook`;
    expect(await attemptCallback(request({ url }))).toMatchObject({ outcome: "delivered" });
    expect(await attemptCallback(request({ url }))).toMatchObject({ outcome: "delivered" });
    expect(server).toMatchObject(seen);
  });

  it("gives a request that may not repeat (a POST of an HTTP request node) a connection of its own", async () => {
    const server = await rawReceiver(() => "answer");
    const outgoing = {
      url: `http://127.0.0.1:${server.port}/api`,
      method: "POST",
      headers: {},
      ownHeaders: {},
      body: "{}",
      timeoutMs: 2000,
      allowPrivateNetworks: true,
      signal: new AbortController().signal,
      maxResponseBytes: 1024,
      mayRepeat: false,
    };
    expect((await sendOnce(outgoing)).status).toBe(200);
    expect((await sendOnce(outgoing)).status).toBe(200);
    expect(server).toMatchObject({ requests: 2, connections: 2 });
  });

  it("waits four times longer before each retry, up to 8 hours: about a day over 9 retries from 5 s", () => {
    expect([1, 2, 3, 4].map((retry) => backoffDelay(1000, retry))).toEqual([1000, 4000, 16_000, 64_000]);
    expect(backoffDelay(1000, 20)).toBe(8 * 3600_000);
    const total = Array.from({ length: 9 }, (_, index) => backoffDelay(5000, index + 1)).reduce((sum, delay) => sum + delay, 0);
    expect(total / 3600_000).toBeCloseTo(23.6, 1);
  });
});

describe("signatures", () => {
  const body = '{"a":1}';

  it("verifies with the secret that signed, within the tolerance only", () => {
    const header = signatureHeader(body, ["whsec_one"], 1_000_000);
    expect(header).toMatch(/^t=1000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, body, "whsec_one", 1_000_100)).toBe(true);
    expect(verifySignature(header, body, "whsec_two", 1_000_100)).toBe(false);
    expect(verifySignature(header, `${body} `, "whsec_one", 1_000_100)).toBe(false);
    expect(verifySignature(header, body, "whsec_one", 1_000_400)).toBe(false);
  });

  it("during a rotation both secrets sign, so either verifies", () => {
    const header = signatureHeader(body, ["whsec_new", "whsec_old"], 1_000_000);
    expect(header.split(",v1=")).toHaveLength(3);
    expect(verifySignature(header, body, "whsec_new", 1_000_000)).toBe(true);
    expect(verifySignature(header, body, "whsec_old", 1_000_000)).toBe(true);
  });
});

/**
 * A receiver at the TCP level, so a test sees its connections and can cut one: `decide` is told
 * which request this is on its connection (1-based) and answers 200 (kept alive) or cuts it.
 */
async function rawReceiver(decide: (requestOnConnection: number) => "answer" | "cut"): Promise<{ port: number; requests: number; connections: number }> {
  const counts = { port: 0, requests: 0, connections: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    counts.connections++;
    sockets.add(socket);
    let received = "";
    let onConnection = 0;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      // A request is whole once its body (Content-Length bytes after the blank line) is in.
      for (;;) {
        const headEnd = received.indexOf("\r\n\r\n");
        if (headEnd === -1) return;
        const length = Number(/content-length: *(\d+)/i.exec(received.slice(0, headEnd))?.[1] ?? 0);
        if (received.length < headEnd + 4 + length) return;
        received = received.slice(headEnd + 4 + length);
        counts.requests++;
        if (decide(++onConnection) === "cut") {
          socket.resetAndDestroy();
          return;
        }
        socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok");
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  counts.port = (server.address() as AddressInfo).port;
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return counts;
}
