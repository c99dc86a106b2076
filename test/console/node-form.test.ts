import { create, fromJson } from "@bufbuild/protobuf";
import { CompletionContext } from "@codemirror/autocomplete";
import { EditorState } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import { runDataPaths, sampleRunData } from "../../console/src/expressions/run-data.ts";
import { completeRunData } from "../../console/src/expressions/jsonata-language.ts";
import { type FieldSpec, fieldsOf, kindForm, refusalHome, refusalPath } from "../../console/src/node-form.ts";
import { NODE_KINDS } from "../../console/src/node-kinds.ts";
import { NodeSchema, PipelineSchema, RouteNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { NODE_FORMS } from "../../src/runs/nodes/forms.ts";
import { NODE_DEFINITIONS } from "../../src/runs/nodes/registry.ts";
import { INVOICES_EXAMPLE_DEFAULTS, invoicesExample } from "../../src/runs/pipes/invoices-example.ts";

/** Every field of a form, with its path through groups ("routes.when"). */
function walk(fields: FieldSpec[], parent = ""): { path: string; spec: FieldSpec }[] {
  return fields.flatMap((spec) => {
    const path = parent === "" ? spec.name : `${parent}.${spec.name}`;
    const inner = (spec.shape === "single" || spec.shape === "list") && spec.value.control === "group" ? walk(spec.value.fields, path) : [];
    return [{ path, spec }, ...inner];
  });
}

const controlOf = (spec: FieldSpec) => (spec.shape === "single" || spec.shape === "list" || spec.shape === "map" ? spec.value.control : spec.shape);

describe("node forms generated from the settings messages", () => {
  it("every node kind of the proto has a form: the registry's label and summary, a control for every settings field", () => {
    expect([...NODE_KINDS].sort()).toEqual(Object.keys(NODE_DEFINITIONS).sort());
    for (const kind of NODE_KINDS) {
      const form = kindForm(kind);
      expect(form.label).toBe(NODE_FORMS[kind].label);
      expect(form.summary).toBe(NODE_FORMS[kind].summary);
      expect(form.fields.map((field) => field.name)).toEqual(form.message.fields.map((field) => field.name));
      // COMMENTS lint gives every field a comment: each control has it as its help.
      for (const { path, spec } of walk(form.fields)) expect(spec.help, `${kind}.${path}`).toMatch(/\w/);
    }
  });

  it("every path the registry's hints name is a field of the kind's settings (a typo would drop its hint)", () => {
    for (const kind of NODE_KINDS) {
      const paths = walk(kindForm(kind).fields).map((entry) => entry.path);
      const hints = NODE_FORMS[kind] as { expressions?: string[]; nodeRefs?: string[]; multiline?: string[]; choices?: Record<string, string[]> };
      for (const hinted of [...(hints.expressions ?? []), ...(hints.nodeRefs ?? []), ...(hints.multiline ?? []), ...Object.keys(hints.choices ?? {})]) {
        expect(paths, `${kind}: ${hinted}`).toContain(hinted);
      }
    }
  });

  it("the expression editor edits exactly the fields pipe.proto documents as JSONata expressions", () => {
    const expressions: string[] = [];
    const documented: string[] = [];
    for (const kind of NODE_KINDS) {
      for (const { path, spec } of walk(kindForm(kind).fields)) {
        if (controlOf(spec) === "expression") expressions.push(`${kind}.${path}`);
        if (/JSONata expression/.test(spec.help ?? "")) documented.push(`${kind}.${path}`);
      }
    }
    expect(expressions).toEqual(documented);
    expect(expressions).toEqual([
      "route.routes.when",
      "review.when",
      "transform.expression",
      "validate.select",
      "httpRequest.url",
      "httpRequest.body",
      "email.to",
      "email.subject",
      "email.body",
      "dedupe.key",
    ]);
  });

  it("enums are choices, repeated fields lists, messages groups, maps rows, a fixed list ticked", () => {
    const route = kindForm("route").fields;
    expect(route.map((field) => [field.name, field.shape, controlOf(field)])).toEqual([
      ["routes", "list", "group"],
      ["otherwise", "list", "node"],
    ]);
    const extract = walk(kindForm("extract").fields);
    const type = extract.find((entry) => entry.path === "fields.type")!.spec;
    expect(type.shape === "single" && type.value.control === "select" && type.value.options.map((option) => option.label)).toEqual([
      "Default",
      "String",
      "Number",
      "Date",
      "Money",
      "Boolean",
    ]);
    expect(controlOf(extract.find((entry) => entry.path === "tables.column_types")!.spec)).toBe("select");
    const callback = kindForm("callback").fields;
    expect(callback.map((field) => [field.label, field.shape, controlOf(field)])).toEqual([
      ["URL", "single", "text"],
      ["Method", "single", "select"],
      ["Headers", "map", "text"],
      ["Retry count", "single", "number"],
      ["Timeout seconds", "single", "number"],
    ]);
    const retries = callback[3]!;
    expect(retries.shape === "single" && retries.value).toEqual({ control: "number", decimal: false, optional: true });
    const formats = kindForm("httpTrigger").fields.find((field) => field.name === "accepted_formats")!;
    expect(formats.shape === "choices" && formats.choices.slice(0, 3)).toEqual(["pdf", "jpeg", "png"]);
    expect(kindForm("merge").fields).toEqual([]);
  });

  it("a oneof is a choice among its fields (the Node message's kind)", () => {
    const kind = fieldsOf(NodeSchema, "", { label: "Node", summary: "" }).find((field) => field.name === "kind")!;
    expect(kind.shape).toBe("oneof");
    expect(kind.shape === "oneof" && kind.cases.map((each) => each.localName)).toEqual(NODE_KINDS);
  });
});

describe("a refusal shown on its field", () => {
  it("the service's field path gives the node's index and the path inside its settings", () => {
    expect(refusalPath("pipeline.nodes[3].route.routes[0].when", "route")).toEqual({ index: 3, path: "routes[0].when", node: false });
    expect(refusalPath("pipeline.nodes[3].route", "route")).toEqual({ index: 3, path: "", node: false });
    expect(refusalPath("pipeline.nodes[1].http_request.url", "httpRequest")).toEqual({ index: 1, path: "url", node: false });
    expect(refusalPath("pipeline.nodes[2].id", "parse")).toEqual({ index: 2, path: "id", node: true });
    expect(refusalPath("pipeline.nodes[2]", "parse")).toEqual({ index: 2, path: "", node: true });
    expect(refusalPath("name", "parse")).toBeUndefined();
  });

  it("on the control drawn for it, else on its nearest drawn ancestor, else at the form's top", () => {
    const fields = kindForm("route").fields;
    const settings = create(RouteNodeSchema, { routes: [{ when: "x", to: ["a"] }, { when: "y" }] });
    expect(refusalHome(fields, settings, "routes[1].when")).toBe("routes[1].when");
    expect(refusalHome(fields, settings, "routes[0].to[0]")).toBe("routes[0].to[0]");
    expect(refusalHome(fields, settings, "routes[7].when")).toBe("routes");
    expect(refusalHome(fields, settings, "routes")).toBe("routes");
    expect(refusalHome(fields, settings, "priority")).toBe("");
    expect(refusalHome(fields, settings, "")).toBe("");
  });
});

describe("expressions: run data to try them on, paths to complete", () => {
  const pipeline = fromJson(PipelineSchema, invoicesExample(INVOICES_EXAMPLE_DEFAULTS));

  it("sample run data has each node's output under its id, an extract's fields by name", () => {
    const data = sampleRunData(pipeline);
    const paths = runDataPaths(data);
    expect(paths).toContain("file.name");
    expect(paths).toContain("extract.fields.number");
    expect(paths).toContain("classify.class");
    expect(paths).toContain("parse.pages.text");
  });

  it("completion offers the run-data paths at a path and JSONata's functions after a $", () => {
    const complete = completeRunData(["extract.fields.total", "file.name"]);
    const at = (doc: string) => complete(new CompletionContext(EditorState.create({ doc }), doc.length, false));
    const paths = at("extract.fi");
    expect(paths?.from).toBe(0);
    expect(paths?.options.map((option) => option.label)).toEqual(["extract.fields.total", "file.name"]);
    const functions = at("total > $su");
    expect(functions?.from).toBe(8);
    expect(functions?.options.map((option) => option.label)).toContain("$sum");
    expect(at("total > ")).toBeNull();
  });
});
