import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Pipeline, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";

/** One setting that differs between two versions of a node (or of the pipeline beside its nodes). */
export interface SettingChange {
  /** Where in the node's JSON: "extract.fields[2].name"; "" for the node as a whole. */
  path: string;
  /** The value in the older version, absent when it was not set there. */
  before?: JsonValue;
  /** The value in the newer version, absent when it is not set there. */
  after?: JsonValue;
}

/** What changed from one pipeline version to another, node by node (by id), in the newer version's order. */
export interface PipelineDiff {
  added: string[];
  removed: string[];
  changed: { id: string; changes: SettingChange[] }[];
  /** Settings of the pipeline outside its nodes. */
  pipeline: SettingChange[];
}

type JsonObject = { [key: string]: JsonValue };

/** Every leaf of `value` by its path; an empty object or list is a leaf, so adding one shows. */
function leaves(value: JsonValue, prefix: string, into: Map<string, JsonValue>): Map<string, JsonValue> {
  if (Array.isArray(value) && value.length > 0) value.forEach((item, index) => leaves(item, `${prefix}[${index}]`, into));
  else if (value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0) {
    for (const [key, inner] of Object.entries(value)) leaves(inner, prefix === "" ? key : `${prefix}.${key}`, into);
  } else into.set(prefix, value);
  return into;
}

/** The settings that differ between two JSON values, path by path, in the order they appear. */
function settingChanges(before: JsonValue, after: JsonValue): SettingChange[] {
  const old = leaves(before, "", new Map());
  const now = leaves(after, "", new Map());
  const changes: SettingChange[] = [];
  for (const path of new Set([...now.keys(), ...old.keys()])) {
    const was = old.get(path);
    const is = now.get(path);
    if (JSON.stringify(was) === JSON.stringify(is)) continue;
    changes.push({ path, ...(old.has(path) ? { before: was } : {}), ...(now.has(path) ? { after: is } : {}) });
  }
  return changes;
}

/** How `after` differs from `before`: nodes added, removed or changed (each with its settings that differ). */
export function pipelineDiff(before: Pipeline | undefined, after: Pipeline | undefined): PipelineDiff {
  const json = (pipeline: Pipeline | undefined) => toJson(PipelineSchema, pipeline ?? create(PipelineSchema)) as JsonObject;
  const { nodes: oldNodes = [], ...oldRest } = json(before);
  const { nodes: newNodes = [], ...newRest } = json(after);
  const byId = (nodes: JsonValue) => new Map((nodes as JsonObject[]).map((node) => [String(node.id ?? ""), node]));
  const old = byId(oldNodes);
  const now = byId(newNodes);
  const diff: PipelineDiff = { added: [], removed: [], changed: [], pipeline: settingChanges(oldRest, newRest) };
  for (const [id, node] of now) {
    const was = old.get(id);
    if (was === undefined) diff.added.push(id);
    else {
      const changes = settingChanges(was, node);
      if (changes.length > 0) diff.changed.push({ id, changes });
    }
  }
  for (const id of old.keys()) if (!now.has(id)) diff.removed.push(id);
  return diff;
}
