import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CallbackMethod, ClassifyNodeSchema, type HttpMethod, OcrMode, type Pipeline, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { runClassify } from "../../src/runs/nodes/classify/classify.ts";
import { nodeContext } from "../nodes/support.ts";
import { isAllowedOriginValue } from "../../src/runs/nodes/http-trigger/settings.ts";
import { MAX_PIPELINE_NODES } from "../../src/runs/nodes/settings.ts";
import { compilePipelineSchemas, PipelineError, requireRunnablePipeline, validatePipeline } from "../../src/runs/pipes/validate-pipeline.ts";

const limits = { maxSizeMbLimit: 100, allowPrivateCallbacks: false };

type NodeInit = NonNullable<MessageInitShape<typeof PipelineSchema>["nodes"]>[number];

const trigger = (settings: Record<string, unknown> = {}): NodeInit => ({
  kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 10, ...settings } },
});
const parse = (id = ""): NodeInit => ({ id, kind: { case: "parse", value: {} } });
const callback = (settings: Record<string, unknown> = {}): NodeInit => ({
  kind: { case: "callback", value: { url: "https://hooks.example.com/docpipe", ...settings } },
});

function pipeline(...nodes: NodeInit[]): Pipeline {
  return create(PipelineSchema, { nodes });
}

/** The PipelineError `rule` throws. */
function pipelineErrorThrownBy(rule: () => unknown): PipelineError {
  try {
    rule();
  } catch (error) {
    if (error instanceof PipelineError) return error;
    throw error;
  }
  throw new Error("expected a PipelineError, nothing was thrown");
}

function expectInvalid(input: Pipeline, field: string): void {
  const error = pipelineErrorThrownBy(() => validatePipeline(input, limits));
  expect(error.reason).toBe("invalid_pipeline");
  expect(error.field).toBe(field);
}

describe("validatePipeline", () => {
  it("accepts an empty pipeline while a pipe is drafted", () => {
    expect(validatePipeline(pipeline(), limits).nodes).toEqual([]);
  });

  it("accepts a trigger, parse and callback pipeline and returns it normalized without changing the input", () => {
    const input = pipeline(trigger({ allowedOrigins: ["https://app.example.com", "http://localhost:3000", "*"] }), parse(), callback());
    const output = validatePipeline(input, limits);
    expect(output.nodes.map((node) => node.id)).toEqual(["http_trigger-1", "parse-1", "callback-1"]);
    expect(input.nodes.map((node) => node.id)).toEqual(["", "", ""]);
  });

  it("assigns <kind>-<n> ids that skip the ids given to other nodes", () => {
    const output = validatePipeline(pipeline(trigger(), parse("parse-1"), parse(), parse("parse-3"), parse()), limits);
    expect(output.nodes.map((node) => node.id)).toEqual(["http_trigger-1", "parse-1", "parse-2", "parse-3", "parse-4"]);
  });

  it("rejects text PostgreSQL cannot hold, a NUL or half a surrogate pair, in a value or a key, naming it", () => {
    expectInvalid(pipeline(trigger(), parse(), callback({ url: "https://hooks.example.com/\u0000" })), "pipeline.nodes[2].callback.url");
    expectInvalid(pipeline(trigger(), parse(), callback({ headers: { "x-token": "a\ud800" } })), "pipeline.nodes[2].callback.headers.x-token");
    expectInvalid(pipeline(trigger(), parse(), callback({ headers: { "x-\udc00": "a" } })), "pipeline.nodes[2].callback.headers.x-\udc00");
  });

  it("rejects a node without a kind as an unknown node type", () => {
    expectInvalid(pipeline(trigger(), { id: "mystery" }), "pipeline.nodes[1]");
  });

  it("rejects a pipeline whose first node is not a trigger", () => {
    expectInvalid(pipeline(parse(), trigger()), "pipeline.nodes[0]");
  });

  it("rejects a second trigger", () => {
    expectInvalid(pipeline(trigger(), parse(), trigger()), "pipeline.nodes[2].http_trigger");
  });

  it("rejects node ids that are not lowercase slugs of at most 63 characters", () => {
    for (const id of ["Parse", "-parse", "parse node", "p".repeat(64), "pärse"]) expectInvalid(pipeline(trigger(), parse(id)), "pipeline.nodes[1].id");
    expect(validatePipeline(pipeline(trigger(), parse("p".repeat(63))), limits).nodes[1]!.id).toBe("p".repeat(63));
  });

  it("rejects the node id file: the run data's document has that member (a node's output there stopped the run outside any step)", () => {
    expectInvalid(pipeline(trigger(), parse("file")), "pipeline.nodes[1].id");
  });

  it("rejects duplicate node ids", () => {
    expectInvalid(pipeline(trigger(), parse("step"), parse("step")), "pipeline.nodes[2].id");
  });

  it("rejects max_size_mb outside 1..the operator limit", () => {
    expectInvalid(pipeline(trigger({ maxSizeMb: 0 })), "pipeline.nodes[0].http_trigger.max_size_mb");
    expectInvalid(pipeline(trigger({ maxSizeMb: 101 })), "pipeline.nodes[0].http_trigger.max_size_mb");
    expect(() => validatePipeline(pipeline(trigger({ maxSizeMb: 100 })), limits)).not.toThrow();
    expect(() => validatePipeline(pipeline(trigger({ maxSizeMb: 1 })), limits)).not.toThrow();
  });

  it("rejects an empty accepted_formats list", () => {
    expectInvalid(pipeline(trigger({ acceptedFormats: [] })), "pipeline.nodes[0].http_trigger.accepted_formats");
  });

  it("rejects an unknown format id, naming its index", () => {
    expectInvalid(pipeline(trigger({ acceptedFormats: ["pdf", "exe"] })), "pipeline.nodes[0].http_trigger.accepted_formats[1]");
    expectInvalid(pipeline(trigger({ acceptedFormats: ["PDF"] })), "pipeline.nodes[0].http_trigger.accepted_formats[0]");
  });

  it("rejects a format listed twice", () => {
    expectInvalid(pipeline(trigger({ acceptedFormats: ["pdf", "png", "pdf"] })), "pipeline.nodes[0].http_trigger.accepted_formats[2]");
  });

  it("rejects an allowed origin that is not exactly scheme://host[:port] or *", () => {
    expectInvalid(pipeline(trigger({ allowedOrigins: ["*", "https://app.example.com/"] })), "pipeline.nodes[0].http_trigger.allowed_origins[1]");
  });

  it("rejects a callback url that is unparsable or not http(s)", () => {
    for (const url of ["", "hooks.example.com/path", "ftp://hooks.example.com/", "javascript:alert(1)", "https://"]) {
      expectInvalid(pipeline(trigger(), callback({ url })), "pipeline.nodes[1].callback.url");
    }
  });

  it("rejects a callback url carrying credentials, which would be stored in clear (headers are sealed)", () => {
    for (const url of ["https://user:secret@hooks.example.com/in", "https://token@hooks.example.com/in", "https://:secret@hooks.example.com/"]) {
      expectInvalid(pipeline(trigger(), callback({ url })), "pipeline.nodes[1].callback.url");
    }
  });

  it("rejects a callback method that is not a known CallbackMethod", () => {
    expectInvalid(pipeline(trigger(), callback({ method: 9 as CallbackMethod })), "pipeline.nodes[1].callback.method");
    expect(() => validatePipeline(pipeline(trigger(), callback({ method: CallbackMethod.PATCH })), limits)).not.toThrow();
  });

  it("rejects callback headers that are not valid HTTP header names or values", () => {
    expectInvalid(pipeline(trigger(), callback({ headers: { "bad name": "x" } })), "pipeline.nodes[1].callback.headers");
    expectInvalid(pipeline(trigger(), callback({ headers: { "X-Ok": "a\r\nInjected: 1" } })), "pipeline.nodes[1].callback.headers");
  });

  it("rejects header values Node would not send (past U+00FF, a zero-width space), and keeps tab and Latin-1", () => {
    for (const value of ["Bearer abc\u20ac", "Bearer\u200babc", "line\u2028separator"]) {
      for (const node of [
        callback({ headers: { authorization: value } }),
        { kind: { case: "httpRequest", value: { url: '"https://x.example"', headers: { authorization: value } } } } as NodeInit,
      ]) {
        const error = pipelineErrorThrownBy(() => validatePipeline(pipeline(trigger(), node), limits));
        const field = `pipeline.nodes[1].${node.kind?.case === "callback" ? "callback" : "http_request"}.headers`;
        expect(error.field, value).toBe(field);
        expect(error.message).toBe(
          `${field}: the value of "authorization" contains control characters or characters past U+00FF, which HTTP headers cannot carry`,
        );
      }
    }
    expect(() => validatePipeline(pipeline(trigger(), callback({ headers: { "x-name": "Fran\u00e7ois\tM\u00fcller ~" } })), limits)).not.toThrow();
  });

  it("rejects retry_count outside 0..10, and leaves it unset when not given", () => {
    expectInvalid(pipeline(trigger(), callback({ retryCount: -1 })), "pipeline.nodes[1].callback.retry_count");
    expectInvalid(pipeline(trigger(), callback({ retryCount: 11 })), "pipeline.nodes[1].callback.retry_count");
    const output = validatePipeline(pipeline(trigger(), callback({ retryCount: 0 }), callback()), limits);
    expect(output.nodes.map((node) => (node.kind.case === "callback" ? node.kind.value.retryCount : null))).toEqual([null, 0, undefined]);
  });

  it("rejects timeout_seconds outside 1..300", () => {
    expectInvalid(pipeline(trigger(), callback({ timeoutSeconds: 0 })), "pipeline.nodes[1].callback.timeout_seconds");
    expectInvalid(pipeline(trigger(), callback({ timeoutSeconds: 301 })), "pipeline.nodes[1].callback.timeout_seconds");
    expect(() => validatePipeline(pipeline(trigger(), callback({ timeoutSeconds: 300 })), limits)).not.toThrow();
  });

  it("rejects a callback to a loopback, private or metadata address unless private networks are allowed", () => {
    for (const url of ["http://127.0.0.1:9000/hook", "http://localhost/hook", "http://10.1.2.3/", "http://169.254.169.254/latest/meta-data", "http://[::1]/"]) {
      expectInvalid(pipeline(trigger(), callback({ url })), "pipeline.nodes[1].callback.url");
      expect(() => validatePipeline(pipeline(trigger(), callback({ url })), { ...limits, allowPrivateCallbacks: true })).not.toThrow();
    }
  });

  it("accepts a parse node's ocr mode and installed languages", () => {
    const settings = { ocr: OcrMode.ALWAYS, languages: ["deu", "eng", "fra"] };
    const normalized = validatePipeline(pipeline(trigger(), { kind: { case: "parse", value: settings } }), limits);
    expect(normalized.nodes[1]!.kind.value).toMatchObject(settings);
  });

  it("rejects an unknown ocr mode, and a language that is not installed or is listed twice, naming its index", () => {
    expectInvalid(pipeline(trigger(), { kind: { case: "parse", value: { ocr: 7 as OcrMode } } }), "pipeline.nodes[1].parse.ocr");
    const klingon = pipeline(trigger(), { kind: { case: "parse", value: { languages: ["eng", "tlh"] } } });
    expectInvalid(klingon, "pipeline.nodes[1].parse.languages[1]");
    expect(pipelineErrorThrownBy(() => validatePipeline(klingon, limits)).message).toBe(
      'pipeline.nodes[1].parse.languages[1]: OCR language "tlh" is not installed; installed: eng, deu, fra',
    );
    expectInvalid(pipeline(trigger(), { kind: { case: "parse", value: { languages: ["eng", "eng"] } } }), "pipeline.nodes[1].parse.languages[1]");
  });

  it("names the field in the message, for people reading buf curl output", () => {
    expect(pipelineErrorThrownBy(() => validatePipeline(pipeline(trigger({ maxSizeMb: 0 })), limits)).message).toBe(
      "pipeline.nodes[0].http_trigger.max_size_mb: must be from 1 to 100",
    );
  });
});

describe("isAllowedOriginValue", () => {
  it.each(["*", "https://app.example.com", "http://localhost:3000", "https://app.example.com:8443", "http://127.0.0.1:8080", "http://[::1]:8080"])(
    "accepts %s",
    (origin) => expect(isAllowedOriginValue(origin)).toBe(true),
  );

  it.each([
    ["a trailing slash", "https://app.example.com/"],
    ["a path", "https://app.example.com/app"],
    ["a query", "https://app.example.com?x=1"],
    ["an uppercase host", "https://App.example.com"],
    ["an uppercase scheme", "HTTPS://app.example.com"],
    ["the default port, which browsers never send", "https://app.example.com:443"],
    ["a scheme other than http(s)", "ftp://files.example.com"],
    ["credentials", "https://user@app.example.com"],
    ["no scheme", "app.example.com"],
    ["a wildcard subdomain", "https://*.example.com"],
    ["the null origin", "null"],
    ["an empty value", ""],
  ])("rejects %s", (_, origin) => expect(isAllowedOriginValue(origin)).toBe(false));
});

describe("requireRunnablePipeline", () => {
  it("accepts a valid pipeline that starts with an http_trigger", () => {
    expect(() => requireRunnablePipeline(pipeline(trigger(), parse()), limits)).not.toThrow();
  });

  it("refuses an empty pipeline with FailedPrecondition pipeline_not_runnable", () => {
    const error = pipelineErrorThrownBy(() => requireRunnablePipeline(pipeline(), limits));
    expect(error.reason).toBe("pipeline_not_runnable");
    expect(error.field).toBe("pipeline.nodes");
  });

  it("refuses a pipeline that no longer fits today's limits, naming the field", () => {
    const error = pipelineErrorThrownBy(() => requireRunnablePipeline(pipeline(trigger({ maxSizeMb: 50 })), { ...limits, maxSizeMbLimit: 20 }));
    expect(error.reason).toBe("pipeline_not_runnable");
    expect(error.field).toBe("pipeline.nodes[0].http_trigger.max_size_mb");
  });
});

describe("bounded pipelines", () => {
  it(`refuses more than ${MAX_PIPELINE_NODES} nodes, and a 20,000-node pipeline at once`, () => {
    expect(() => validatePipeline(pipeline(trigger(), ...Array.from({ length: MAX_PIPELINE_NODES - 1 }, () => parse())), limits)).not.toThrow();
    expectInvalid(pipeline(trigger(), ...Array.from({ length: MAX_PIPELINE_NODES }, () => parse())), "pipeline.nodes");
    const started = performance.now();
    expectInvalid(pipeline(trigger(), ...Array.from({ length: 20_000 }, () => parse())), "pipeline.nodes");
    // Refused by its length before any node is looked at (95 s before the bound); generous for a loaded machine.
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("assigns ids to id-less nodes around given ones without collisions", () => {
    const output = validatePipeline(pipeline(trigger(), parse("parse-2"), parse(), parse(), parse("parse-1x"), parse()), limits);
    expect(output.nodes.map((node) => node.id)).toEqual(["http_trigger-1", "parse-2", "parse-1", "parse-3", "parse-1x", "parse-4"]);
  });

  it("refuses long lists inside a trigger or a callback", () => {
    expectInvalid(
      pipeline(trigger({ allowedOrigins: Array.from({ length: 101 }, (_, i) => `https://a${i}.example.com`) })),
      "pipeline.nodes[0].http_trigger.allowed_origins",
    );
    expectInvalid(pipeline(trigger({ acceptedFormats: Array.from({ length: 10_000 }, () => "pdf") })), "pipeline.nodes[0].http_trigger.accepted_formats[1]");
    const headers = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`x-h${i}`, "v"]));
    expectInvalid(pipeline(trigger(), callback({ headers })), "pipeline.nodes[1].callback.headers");
    expectInvalid(pipeline(trigger(), callback({ headers: { authorization: "x".repeat(8193) } })), "pipeline.nodes[1].callback.headers");
  });
});

describe("validatePipeline: data nodes and the email trigger", () => {
  const emailTrigger = (settings: Record<string, unknown> = {}): NodeInit => ({
    kind: { case: "emailTrigger", value: { allowedSenders: ["@supplier.example"], acceptedFormats: ["pdf"], maxSizeMb: 10, ...settings } },
  });

  it("accepts an email trigger first, or after an HTTP trigger, and assigns ids to every data node", () => {
    const valid = validatePipeline(
      pipeline(
        trigger(),
        emailTrigger(),
        parse(),
        { kind: { case: "classify", value: { classes: [{ name: "invoice", rules: [{ keywords: ["invoice"] }] }] } } },
        { kind: { case: "extract", value: { fields: [{ name: "number", labels: ["Invoice number"] }] } } },
        { kind: { case: "transform", value: { expression: "extract_1.fields" } } },
        { kind: { case: "validate", value: { schema: '{"type":"object"}' } } },
        { kind: { case: "httpRequest", value: { url: '"https://erp.example.com/x"' } } },
        { kind: { case: "email", value: { to: '"ap@example.com"', subject: '"Invoice"' } } },
      ),
      limits,
    );
    expect(valid.nodes.map((node) => node.id)).toEqual([
      "http_trigger-1",
      "email_trigger-1",
      "parse-1",
      "classify-1",
      "extract-1",
      "transform-1",
      "validate-1",
      "http_request-1",
      "email-1",
    ]);
    expect(() => validatePipeline(pipeline(emailTrigger(), parse()), limits)).not.toThrow();
  });

  it("refuses triggers anywhere but first", () => {
    expectInvalid(pipeline(emailTrigger(), trigger()), "pipeline.nodes[1].http_trigger");
    expectInvalid(pipeline(trigger(), parse(), emailTrigger()), "pipeline.nodes[2].email_trigger");
    expectInvalid(pipeline(parse()), "pipeline.nodes[0]");
  });

  it("checks an email trigger's senders, formats, size and limits", () => {
    expectInvalid(pipeline(emailTrigger({ allowedSenders: ["not an address"] })), "pipeline.nodes[0].email_trigger.allowed_senders[0]");
    expectInvalid(pipeline(emailTrigger({ acceptedFormats: [] })), "pipeline.nodes[0].email_trigger.accepted_formats");
    expectInvalid(pipeline(emailTrigger({ maxSizeMb: 0 })), "pipeline.nodes[0].email_trigger.max_size_mb");
    expectInvalid(pipeline(emailTrigger({ maxMessagesPerHour: -1 })), "pipeline.nodes[0].email_trigger.max_messages_per_hour");
  });

  it("refuses a JSONata expression that does not compile, naming the field and the position", () => {
    const error = pipelineErrorThrownBy(() => validatePipeline(pipeline(trigger(), { kind: { case: "transform", value: { expression: "a.(b" } } }), limits));
    expect(error.field).toBe("pipeline.nodes[1].transform.expression");
    expect(error.message).toMatch(/^pipeline\.nodes\[1\]\.transform\.expression at position 4: /);
  });

  it("refuses a JSON Schema that Ajv cannot compile, compiling it apart (in a matching thread)", async () => {
    const valid = validatePipeline(pipeline(trigger(), { kind: { case: "validate", value: { schema: '{"type":"strin"}' } } }), limits);
    await expect(compilePipelineSchemas(valid)).rejects.toMatchObject({
      reason: "invalid_pipeline",
      field: "pipeline.nodes[1].validate.schema",
      message: expect.stringMatching(/^pipeline\.nodes\[1\]\.validate\.schema: schema is invalid: /),
    });
    await expect(
      compilePipelineSchemas(validatePipeline(pipeline(trigger(), { kind: { case: "validate", value: { schema: '{"type":"string"}' } } }), limits)),
    ).resolves.toBeUndefined();
  });

  it("refuses a JSON Schema that is not JSON, a pattern that does not compile, and fields without a place to look", () => {
    expectInvalid(pipeline(trigger(), { kind: { case: "validate", value: { schema: '{"type":' } } }), "pipeline.nodes[1].validate.schema");
    expectInvalid(
      pipeline(trigger(), { kind: { case: "extract", value: { fields: [{ name: "x", pattern: "(" }] } } }),
      "pipeline.nodes[1].extract.fields[0].pattern",
    );
    expectInvalid(pipeline(trigger(), { kind: { case: "extract", value: { fields: [{ name: "x" }] } } }), "pipeline.nodes[1].extract.fields[0]");
    expectInvalid(
      pipeline(trigger(), { kind: { case: "extract", value: { fields: [{ name: "__proto__", labels: ["a"] }] } } }),
      "pipeline.nodes[1].extract.fields[0].name",
    );
    expectInvalid(
      pipeline(trigger(), { kind: { case: "extract", value: { fields: [{ name: "x", labels: ["a"] }], tables: [{ name: "__proto__" }] } } }),
      "pipeline.nodes[1].extract.tables[0].name",
    );
    expectInvalid(
      pipeline(trigger(), { kind: { case: "extract", value: { fields: [{ name: "x", labels: ["a"] }], tables: [{ name: "x" }] } } }),
      "pipeline.nodes[1].extract.tables[0].name",
    );
    expectInvalid(pipeline(trigger(), { kind: { case: "email", value: { to: '"a@b.example"' } } }), "pipeline.nodes[1].email.subject");
  });

  it("refuses a keyword or label past 100 characters or 8 words, or empty: each is looked for at every position of a text", () => {
    const classify = (keywords: string[]): NodeInit => ({ kind: { case: "classify", value: { classes: [{ name: "c", rules: [{ keywords }] }] } } });
    const extract = (labels: string[]): NodeInit => ({ kind: { case: "extract", value: { fields: [{ name: "x", labels }] } } });
    expect(() => validatePipeline(pipeline(trigger(), parse(), classify(["one two three four five six seven eight", "x".repeat(100)])), limits)).not.toThrow();
    expectInvalid(
      pipeline(trigger(), classify(["invoice", "one two three four five six seven eight nine"])),
      "pipeline.nodes[1].classify.classes[0].rules[0].keywords[1]",
    );
    expectInvalid(pipeline(trigger(), classify(["x".repeat(101)])), "pipeline.nodes[1].classify.classes[0].rules[0].keywords[0]");
    expectInvalid(pipeline(trigger(), classify([" "])), "pipeline.nodes[1].classify.classes[0].rules[0].keywords[0]");
    expectInvalid(pipeline(trigger(), extract(["Total", "a ".repeat(9)])), "pipeline.nodes[1].extract.fields[0].labels[1]");
  });

  it("refuses a classify rule that would decide every document alike: no condition, an unknown format, an empty page range, a weight that is no number", () => {
    const classify = (rules: object[]): NodeInit => ({ kind: { case: "classify", value: { classes: [{ name: "invoice", rules }] } } }) as NodeInit;
    const field = "pipeline.nodes[1].classify.classes[0].rules[0]";
    expect(() => validatePipeline(pipeline(trigger(), parse(), classify([{ formats: ["pdf"], minPages: 1, maxPages: 1, weight: -2 }])), limits)).not.toThrow();
    expectInvalid(pipeline(trigger(), classify([{}])), field);
    expectInvalid(pipeline(trigger(), classify([{ weight: 3 }])), field);
    expectInvalid(pipeline(trigger(), classify([{ formats: ["PDF"] }])), `${field}.formats[0]`);
    expectInvalid(pipeline(trigger(), classify([{ minPages: 3, maxPages: 2 }])), `${field}.max_pages`);
    expectInvalid(pipeline(trigger(), classify([{ minPages: -1, formats: ["pdf"] }])), `${field}.min_pages`);
    expectInvalid(pipeline(trigger(), classify([{ maxPages: 0 }])), `${field}.max_pages`);
    expectInvalid(pipeline(trigger(), classify([{ keywords: ["invoice"], weight: Number.NaN }])), `${field}.weight`);
    expectInvalid(pipeline(trigger(), classify([{ keywords: ["invoice"], weight: Number.POSITIVE_INFINITY }])), `${field}.weight`);
  });

  it("refuses a classify rule whose only condition is min_pages 0: every document has at least 0 pages, so it holds for every document like a rule of none", async () => {
    const rules = [{ minPages: 0 }];
    // At run time the rule holds whatever the document: a class scored for every document, without a word.
    const node = create(ClassifyNodeSchema, { classes: [{ name: "invoice", rules }] });
    const output = await runClassify(node, { read: { text: "a letter about nothing", pageCount: 1 } }, nodeContext());
    expect(output.class).toBe("invoice");
    const classify: NodeInit = { kind: { case: "classify", value: { classes: [{ name: "invoice", rules }] } } } as NodeInit;
    expect(pipelineErrorThrownBy(() => validatePipeline(pipeline(trigger(), parse(), classify), limits)).field).toMatch(
      /^pipeline\.nodes\[2\]\.classify\.classes\[0\]\.rules\[0\]/,
    );
  });

  it("checks an HTTP request node's headers and method like a callback's", () => {
    expectInvalid(
      pipeline(trigger(), { kind: { case: "httpRequest", value: { url: '"https://x.example"', headers: { "bad name": "v" } } } }),
      "pipeline.nodes[1].http_request.headers",
    );
    expectInvalid(
      pipeline(trigger(), { kind: { case: "httpRequest", value: { url: '"https://x.example"', method: 99 as HttpMethod } } }),
      "pipeline.nodes[1].http_request.method",
    );
    expectInvalid(pipeline(trigger(), { kind: { case: "httpRequest", value: { url: "" } } }), "pipeline.nodes[1].http_request.url");
  });
});
