import { describe, expect, it } from "vitest";
import { backoffDelay, CallbackDeliveryError, type CallbackRequest, deliverCallback } from "../../src/callbacks/deliver.ts";
import { signatureHeader } from "../../src/callbacks/signature.ts";
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
    retries: 3,
    backoffMs: 5,
    allowPrivateNetworks: true,
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe("deliverCallback", () => {
  it("sends the body with the method and headers, and reports the 2xx status", async () => {
    receiver.deliveries.length = 0;
    receiver.respond = (_delivery, response) => response.writeHead(204).end();
    const result = await deliverCallback(
      request({ method: "PUT", headers: { "X-Tenant": "acme", "Content-Length": "1" }, sign: () => ({ "X-DocPipe-Signature": "t=1,v1=ab" }) }),
    );
    expect(result).toEqual({ status: 204, attempts: 1 });
    expect(receiver.deliveries[0]).toMatchObject({
      method: "PUT",
      body: '{"runId":"r1"}',
      headers: { "x-tenant": "acme", "content-type": "application/json", "x-docpipe-signature": "t=1,v1=ab" },
    });
  });

  it("retries a receiver that answers 500 twice, and delivers on the third attempt", async () => {
    receiver.deliveries.length = 0;
    receiver.respond = (_delivery, response) => response.writeHead(receiver.deliveries.length <= 2 ? 500 : 200).end();
    expect(await deliverCallback(request())).toEqual({ status: 200, attempts: 3 });
    expect(receiver.deliveries).toHaveLength(3);
  });

  it("does not follow redirects and fails after the last retry", async () => {
    receiver.deliveries.length = 0;
    receiver.respond = (_delivery, response) => response.writeHead(302, { location: "http://169.254.169.254/" }).end();
    await expect(deliverCallback(request({ retries: 1 }))).rejects.toThrow(/failed after 2 attempts; last: HTTP 302/);
    expect(receiver.deliveries).toHaveLength(2);
  });

  it("gives up on an attempt past its timeout", async () => {
    receiver.respond = () => {};
    await expect(deliverCallback(request({ retries: 0, timeoutMs: 100 }))).rejects.toThrow(/no answer within 100 ms/);
  });

  it("refuses private addresses unless allowed, without sending anything", async () => {
    receiver.deliveries.length = 0;
    await expect(deliverCallback(request({ allowPrivateNetworks: false }))).rejects.toThrow(CallbackDeliveryError);
    await expect(deliverCallback(request({ url: receiver.url.replace("127.0.0.1", "localhost"), allowPrivateNetworks: false }))).rejects.toThrow(/loopback/);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it("doubles the backoff for each retry, up to a minute", () => {
    expect([1, 2, 3, 4].map((retry) => backoffDelay(1000, retry))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(1000, 20)).toBe(60_000);
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
