import { create, fromJson, type JsonObject, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { emptyPipelineForm, formFieldOf, formShows, fromPipeline, pipelineFromJson, pipelineJson, toPipeline } from "../../console/src/pipeline-form.ts";
import { INVOICES_EXAMPLE_DEFAULTS, invoicesExample } from "../../src/runs/pipes/invoices-example.ts";
import { CallbackMethod, OcrMode, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";

describe("the pipe editor's pipeline", () => {
  it("a new pipe: an HTTP trigger (pdf, 10 MB) then parse", () => {
    expect(toJson(PipelineSchema, toPipeline(emptyPipelineForm()))).toEqual({
      nodes: [
        { id: "trigger", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } },
        { id: "parse", parse: {} },
      ],
    });
  });

  it("origins are one per line, headers 'Name: value' lines; blank retries and timeout stay unset", () => {
    const form = emptyPipelineForm();
    form.trigger = { id: "in", allowedOrigins: " https://a.example \n\nhttps://b.example\n", acceptedFormats: ["png", "jpeg"], maxSizeMb: "2" };
    form.parse.enabled = false;
    form.callback = {
      enabled: true,
      id: "out",
      url: "https://hooks.example/x",
      method: CallbackMethod.PUT,
      headers: "Authorization: Bearer a:b\nX-Empty",
      retryCount: "",
      timeoutSeconds: "",
    };
    expect(toJson(PipelineSchema, toPipeline(form))).toEqual({
      nodes: [
        { id: "in", httpTrigger: { allowedOrigins: ["https://a.example", "https://b.example"], acceptedFormats: ["png", "jpeg"], maxSizeMb: 2 } },
        { id: "out", callback: { url: "https://hooks.example/x", method: "CALLBACK_METHOD_PUT", headers: { Authorization: "Bearer a:b", "X-Empty": "" } } },
      ],
    });
  });

  it("typed retries and timeout are sent as typed, for the service to judge", () => {
    const form = emptyPipelineForm();
    form.callback = { ...form.callback, enabled: true, url: "https://hooks.example", retryCount: "0", timeoutSeconds: "9999" };
    const callback = toPipeline(form).nodes[2]!.kind;
    expect(callback.case === "callback" && [callback.value.retryCount, callback.value.timeoutSeconds]).toEqual([0, 9999]);
  });

  it("a saved pipeline comes back to the same form", () => {
    const pipeline = create(PipelineSchema, {
      nodes: [
        { id: "t", kind: { case: "httpTrigger", value: { allowedOrigins: ["https://a.example"], acceptedFormats: ["pdf", "txt"], maxSizeMb: 5 } } },
        { id: "p", kind: { case: "parse", value: {} } },
        {
          id: "c",
          kind: {
            case: "callback",
            value: { url: "https://hooks.example", method: CallbackMethod.PATCH, headers: { "X-A": "1" }, retryCount: 3, timeoutSeconds: 20 },
          },
        },
      ],
    });
    const form = fromPipeline(pipeline);
    expect(form).toEqual({
      trigger: { id: "t", allowedOrigins: "https://a.example", acceptedFormats: ["pdf", "txt"], maxSizeMb: "5" },
      parse: { enabled: true, id: "p", ocr: OcrMode.UNSPECIFIED, languages: [], rulingLines: false },
      callback: {
        enabled: true,
        id: "c",
        url: "https://hooks.example",
        method: CallbackMethod.PATCH,
        headers: "X-A: 1",
        retryCount: "3",
        timeoutSeconds: "20",
      },
    });
    expect(toPipeline(form)).toEqual(pipeline);
  });

  it("a parse node's OCR settings, not edited by the form, and its ruling lines setting are saved back as they were", () => {
    const pipeline = create(PipelineSchema, {
      nodes: [
        { id: "t", kind: { case: "httpTrigger", value: { acceptedFormats: ["png"], maxSizeMb: 5 } } },
        { id: "p", kind: { case: "parse", value: { ocr: OcrMode.ALWAYS, languages: ["deu", "fra"], rulingLines: true } } },
      ],
    });
    const form = fromPipeline(pipeline);
    form.trigger.maxSizeMb = "6";
    const parse = toPipeline(form).nodes[1]!.kind;
    expect(parse.case === "parse" && [parse.value.ocr, parse.value.languages, parse.value.rulingLines]).toEqual([OcrMode.ALWAYS, ["deu", "fra"], true]);
  });

  it("a pipeline without parse or callback has them switched off", () => {
    const form = fromPipeline(
      create(PipelineSchema, { nodes: [{ id: "t", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 1 } } }] }),
    );
    expect([form.parse.enabled, form.callback.enabled]).toEqual([false, false]);
  });

  it.each([
    ["pipeline.nodes[0].http_trigger.max_size_mb", "httpTrigger.max_size_mb"],
    ["pipeline.nodes[0].http_trigger.accepted_formats[2]", "httpTrigger.accepted_formats"],
    ["pipeline.nodes[2].callback.url", "callback.url"],
    ["pipeline.nodes[1].id", "parse.id"],
    ["pipeline.nodes[1]", "parse"],
    ["pipeline.nodes[7].callback.url", "pipeline"],
    ["name", "name"],
    ["workspace_id", "workspace_id"],
  ])("the service's field %s is the editor's %s", (serverField, formField) => {
    const form = emptyPipelineForm();
    form.callback = { ...form.callback, enabled: true };
    expect(formFieldOf(serverField, toPipeline(form))).toBe(formField);
  });

  it("node indexes follow the pipeline that was sent: without parse, node 1 is the callback", () => {
    const form = emptyPipelineForm();
    form.parse.enabled = false;
    form.callback = { ...form.callback, enabled: true };
    expect(formFieldOf("pipeline.nodes[1].callback.url", toPipeline(form))).toBe("callback.url");
  });
});

describe("pipelines the form cannot show are edited as JSON, so saving drops nothing", () => {
  const trigger: JsonObject = { id: "in", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } };
  const linear: JsonObject = { nodes: [trigger, { id: "parse", parse: {} }] };

  it("the form shows a trigger, a parse and a callback", () => {
    expect(formShows(fromJson(PipelineSchema, linear))).toBe(true);
    expect(formShows(toPipeline(emptyPipelineForm()))).toBe(true);
  });

  it("not a node it has no fields for, a graph's next or end_branch, nor a second callback", () => {
    expect(formShows(fromJson(PipelineSchema, invoicesExample(INVOICES_EXAMPLE_DEFAULTS)))).toBe(false);
    expect(formShows(fromJson(PipelineSchema, { nodes: [trigger, { id: "parse", parse: {}, next: [], endBranch: true }] }))).toBe(false);
    const twoCallbacks: JsonObject = {
      nodes: [trigger, { id: "parse", parse: {} }, { id: "a", callback: { url: "https://a.example" } }, { id: "b", callback: { url: "https://b.example" } }],
    };
    expect(formShows(fromJson(PipelineSchema, twoCallbacks))).toBe(false);
  });

  it("the JSON is the API's, and reads back to the same pipeline; an unknown field is an error", () => {
    const example = fromJson(PipelineSchema, invoicesExample(INVOICES_EXAMPLE_DEFAULTS));
    expect(JSON.parse(pipelineJson(example))).toEqual(invoicesExample(INVOICES_EXAMPLE_DEFAULTS));
    expect(toJson(PipelineSchema, pipelineFromJson(pipelineJson(example)))).toEqual(toJson(PipelineSchema, example));
    expect(() => pipelineFromJson('{ "nodes": [ { "id": "in", "nope": {} } ] }')).toThrow(/nope/);
  });
});
