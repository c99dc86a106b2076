import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HttpMethod, HttpRequestNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { storableValue } from "../../src/data/db/storable.ts";
import { type HttpRequestContext, runHttpRequest } from "../../src/runs/nodes/http-request/http-request.ts";
import { startReceiver } from "../callbacks/receiver.ts";
import { nodeContext, stepErrorOf } from "./support.ts";

const RUN_DATA = { extract: { fields: { number: "INV-7", total: { amount: 12.5, currency: "EUR" } } } };

function httpContext(overrides: Partial<HttpRequestContext> = {}): HttpRequestContext {
  return {
    ...nodeContext(),
    allowPrivateNetworks: true,
    backoffMs: 1,
    openHeaders: (headers) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value.replace(/^sealed:/, "")])),
    ...overrides,
  };
}

describe("http_request", async () => {
  const receiver = await startReceiver();
  const base = receiver.url.replace(/\/hook$/, "");

  it("sends the method, URL and body built by JSONata with the opened headers, and outputs the JSON response", async () => {
    receiver.respond = (_delivery, response) => {
      response.setHeader("content-type", "application/json; charset=utf-8");
      response.end(JSON.stringify({ accepted: true, id: 42 }));
    };
    const node = create(HttpRequestNodeSchema, {
      method: HttpMethod.PUT,
      url: `"${base}/invoices/" & extract.fields.number`,
      body: '{"amount": extract.fields.total.amount}',
      headers: { authorization: "sealed:Bearer s3cret", "content-length": "1" },
    });
    const before = receiver.deliveries.length;
    expect(await runHttpRequest(node, RUN_DATA, httpContext())).toEqual({ status: 200, body: { accepted: true, id: 42 } });
    const delivery = receiver.deliveries[before]!;
    expect(delivery.method).toBe("PUT");
    expect(delivery.headers.authorization).toBe("Bearer s3cret");
    expect(delivery.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(delivery.body)).toEqual({ amount: 12.5 });
  });

  it("sends the whole run data when the node has no body, and keeps a text response as text", async () => {
    receiver.respond = (_delivery, response) => response.end("thanks");
    const node = create(HttpRequestNodeSchema, { url: `"${base}/hook"` });
    const before = receiver.deliveries.length;
    expect(await runHttpRequest(node, RUN_DATA, httpContext())).toEqual({ status: 200, body: "thanks" });
    expect(JSON.parse(receiver.deliveries[before]!.body)).toEqual(RUN_DATA);
  });

  it("retries a 503 and gives up with http_request_failed after its retries", async () => {
    receiver.respond = (_delivery, response) => {
      response.statusCode = 503;
      response.end();
    };
    const before = receiver.deliveries.length;
    const error = await stepErrorOf(() => runHttpRequest(create(HttpRequestNodeSchema, { url: `"${base}/hook"`, retryCount: 2 }), RUN_DATA, httpContext()));
    expect(error.message).toBe(`http_request_failed: POST ${new URL(base).host} failed: HTTP 503`);
    expect(error.details).toEqual({ attempts: 3 });
    expect(receiver.deliveries.length - before).toBe(3);
  });

  it("does not follow a redirect, nor retry a 4xx", async () => {
    receiver.respond = (_delivery, response) => {
      response.statusCode = 302;
      response.setHeader("location", "http://169.254.169.254/latest/meta-data");
      response.end();
    };
    const before = receiver.deliveries.length;
    const error = await stepErrorOf(() =>
      runHttpRequest(create(HttpRequestNodeSchema, { method: HttpMethod.GET, url: `"${base}/x"`, retryCount: 3 }), {}, httpContext()),
    );
    expect(error.code).toBe("http_request_failed");
    expect(error.message).toContain("HTTP 302 (redirects are not followed)");
    expect(receiver.deliveries.length - before).toBe(1);
  });

  it("is refused for a private address unless private networks are allowed", async () => {
    const node = create(HttpRequestNodeSchema, { url: `"${base}/hook"` });
    const before = receiver.deliveries.length;
    const error = await stepErrorOf(() => runHttpRequest(node, RUN_DATA, httpContext({ allowPrivateNetworks: false })));
    expect(error.code).toBe("http_request_refused");
    expect(error.message).toBe(
      "http_request_refused: url host 127.0.0.1 is not a public address (an operator may allow private networks: CALLBACK_ALLOW_PRIVATE_NETWORKS=true)",
    );
    const named = await stepErrorOf(() =>
      runHttpRequest(create(HttpRequestNodeSchema, { url: '"http://localhost:1/x"' }), RUN_DATA, httpContext({ allowPrivateNetworks: false })),
    );
    expect(named.message).toBe(
      "http_request_refused: url host localhost is a loopback name (an operator may allow private networks: CALLBACK_ALLOW_PRIVATE_NETWORKS=true)",
    );
    expect(receiver.deliveries.length).toBe(before);
  });

  it("is refused, not retried, for a header value Node cannot send (saved before such values were refused)", async () => {
    const before = receiver.deliveries.length;
    const node = create(HttpRequestNodeSchema, { url: `"${base}/hook"`, headers: { authorization: "sealed:Bearer abc\u20ac" }, retryCount: 3 });
    const error = await stepErrorOf(() => runHttpRequest(node, RUN_DATA, httpContext()));
    expect(error.message).toBe('http_request_refused: a header cannot be sent: Invalid character in header content ["authorization"]');
    expect(receiver.deliveries.length).toBe(before);
  });

  it("is refused for a URL carrying credentials, sending nothing and recording nothing in test mode", async () => {
    const before = receiver.deliveries.length;
    const withUser = `${base.replace("http://", "http://user:s3cret@")}/hook`;
    for (const [url, testMode] of [
      [withUser, false],
      [withUser, true],
      [`${base.replace("http://", "http://:s3cret@")}/hook`, true],
    ] as const) {
      const error = await stepErrorOf(() => runHttpRequest(create(HttpRequestNodeSchema, { url: "url" }), { url }, httpContext({ testMode })));
      expect(error.message, url).toBe("http_request_refused: url must not carry credentials (user:password@); send them in a header");
      expect(error.message).not.toContain("s3cret");
    }
    expect(receiver.deliveries.length).toBe(before);
  });

  it("fails with http_response_invalid for a JSON response nested deeper than 256 levels, and keeps one of 256", async () => {
    const node = create(HttpRequestNodeSchema, { method: HttpMethod.GET, url: `"${base}/x"` });
    const answer = (json: string) => {
      receiver.respond = (_delivery, response) => {
        response.setHeader("content-type", "application/json");
        response.end(json);
      };
    };
    for (const depth of [257, 5000]) {
      answer("[".repeat(depth) + "]".repeat(depth));
      expect((await stepErrorOf(() => runHttpRequest(node, {}, httpContext()))).message, String(depth)).toBe(
        "http_response_invalid: the JSON response nests deeper than 256 levels (HTTP 200)",
      );
    }
    answer(`${'{"a":'.repeat(255)}["[{\\"\\\\", "${"[".repeat(300)}"]${"}".repeat(255)}`);
    const output = (await runHttpRequest(node, {}, httpContext())) as { body: unknown };
    expect(storableValue(output)).toEqual(output);
  });

  it("records the request instead of sending it in test mode, without header values", async () => {
    const node = create(HttpRequestNodeSchema, { url: `"${base}/invoices"`, headers: { authorization: "sealed:Bearer s3cret" } });
    const before = receiver.deliveries.length;
    expect(await runHttpRequest(node, RUN_DATA, httpContext({ testMode: true }))).toEqual({
      testMode: true,
      // The path and query are masked, as header values are: tokens travel there too.
      request: { method: "POST", url: `${new URL(base).origin}/****`, headers: ["authorization"], body: RUN_DATA },
    });
    expect(receiver.deliveries.length).toBe(before);
  });

  it("in test mode records no token carried in the URL's query (the recorded request is stored as the step's output)", async () => {
    const node = create(HttpRequestNodeSchema, { url: `"${base}/invoices?api_key=qu3ry-t0ken-s3cret"` });
    const recorded = await runHttpRequest(node, RUN_DATA, httpContext({ testMode: true }));
    expect(JSON.stringify(storableValue(recorded))).not.toContain("qu3ry-t0ken-s3cret");
  });

  it("fails with expression_failed when the URL expression gives no string", async () => {
    const error = await stepErrorOf(() => runHttpRequest(create(HttpRequestNodeSchema, { url: "extract.fields.total" }), RUN_DATA, httpContext()));
    expect(error.message).toBe("expression_failed: http_request.url: the expression gives object, not a URL string");
  });
});
