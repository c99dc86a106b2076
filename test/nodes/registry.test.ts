import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { NodeSchema, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { NodeType } from "../../gen/docpipe/v1/run_pb.js";
import type { NodeKind } from "../../src/runs/nodes/definition.ts";
import { NODE_DEFINITIONS, NODE_KINDS } from "../../src/runs/nodes/registry.ts";
import { PipelineError, validatePipeline } from "../../src/runs/pipes/validate-pipeline.ts";

const limits = { maxSizeMbLimit: 100, allowPrivateCallbacks: false };
const kindOneof = NodeSchema.oneofs.find((oneof) => oneof.name === "kind")!;

type NodeInit = NonNullable<MessageInitShape<typeof PipelineSchema>["nodes"]>[number];

/**
 * A setting each kind refuses (typed: a kind without a row does not compile); null for a kind
 * without settings.
 */
const BAD_SETTINGS: { [K in NodeKind]: { settings: Record<string, unknown>; field: string } | null } = {
  httpTrigger: { settings: { acceptedFormats: [], maxSizeMb: 10 }, field: "accepted_formats" },
  emailTrigger: { settings: { acceptedFormats: ["pdf"], maxSizeMb: 10, allowedSenders: ["no address"] }, field: "allowed_senders[0]" },
  parse: { settings: { languages: ["klingon"] }, field: "languages[0]" },
  callback: { settings: { url: "not a url" }, field: "url" },
  route: { settings: { routes: [] }, field: "routes" },
  review: { settings: { timeoutHours: -1 }, field: "timeout_hours" },
  extract: { settings: { fields: [{ name: "", pattern: "\\d+" }] }, field: "fields[0].name" },
  classify: { settings: { classes: [{ name: " " }] }, field: "classes[0].name" },
  transform: { settings: { expression: "" }, field: "expression" },
  validate: { settings: { schema: "{not json" }, field: "schema" },
  httpRequest: { settings: { url: "" }, field: "url" },
  email: { settings: { to: "", subject: "'Invoice'" }, field: "to" },
  chunk: { settings: { maxCharacters: -1 }, field: "max_characters" },
  split: { settings: {}, field: "" },
  merge: null,
  dedupe: { settings: { key: "invoice.number", withinDays: 0 }, field: "within_days" },
};

describe("the node registry", () => {
  it("has a definition for every case of pipe.proto's Node.kind oneof, named by its field, and no other", () => {
    expect(NODE_KINDS.toSorted()).toEqual(kindOneof.fields.map((field) => field.localName).toSorted());
    for (const field of kindOneof.fields) {
      const definition = NODE_DEFINITIONS[field.localName as NodeKind];
      expect(definition.name).toBe(field.name);
      // run.proto's NodeType names each kind: NODE_TYPE_<FIELD NAME>.
      expect(NodeType[definition.nodeType]).toBe(field.name.toUpperCase());
    }
  });

  it("names credentials only for kinds whose settings have headers and a url (callback, http_request): those are sealed and masked", () => {
    const carrying = NODE_KINDS.filter((kind) => "credentials" in NODE_DEFINITIONS[kind]);
    expect(carrying.toSorted()).toEqual(["callback", "httpRequest"]);
    for (const kind of carrying) {
      const fields = kindOneof.fields.find((field) => field.localName === kind)!.message!.fields.map((field) => field.name);
      expect(fields).toEqual(expect.arrayContaining(["headers", "url"]));
    }
  });

  it.each(NODE_KINDS)("%s refuses an obviously bad setting, naming its field (or has no settings)", (kind) => {
    const field = kindOneof.fields.find((each) => each.localName === kind)!;
    const bad = BAD_SETTINGS[kind];
    if (bad === null) {
      expect(field.message?.fields).toEqual([]);
      expect("check" in NODE_DEFINITIONS[kind]).toBe(false);
      return;
    }
    const node: NodeInit = { id: "probe", kind: { case: kind, value: bad.settings } as NodeInit["kind"] };
    const isTrigger = "isTrigger" in NODE_DEFINITIONS[kind];
    const nodes: NodeInit[] = isTrigger ? [node] : [{ kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 10 } } }, node];
    const path = `pipeline.nodes[${nodes.length - 1}].${field.name}`;
    let error: unknown;
    try {
      validatePipeline(create(PipelineSchema, { nodes }), limits);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(PipelineError);
    expect((error as PipelineError).reason).toBe("invalid_pipeline");
    expect((error as PipelineError).field).toBe(bad.field === "" ? path : `${path}.${bad.field}`);
  });
});
