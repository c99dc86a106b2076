import { httpTriggerNode } from "./http-trigger/definition.ts";
import { emailTriggerNode } from "./email-trigger/definition.ts";
import { parseNode } from "./parse/definition.ts";
import { callbackNode } from "./callback/definition.ts";
import { routeNode } from "./route/definition.ts";
import { reviewNode } from "./review/definition.ts";
import { extractNode } from "./extract/definition.ts";
import { classifyNode } from "./classify/definition.ts";
import { transformNode } from "./transform/definition.ts";
import { validateNode } from "./validate/definition.ts";
import { httpRequestNode } from "./http-request/definition.ts";
import { emailNode } from "./email/definition.ts";
import { chunkNode } from "./chunk/definition.ts";
import { splitNode } from "./split/definition.ts";
import { mergeNode } from "./merge/definition.ts";
import { dedupeNode } from "./dedupe/definition.ts";
import type { HttpTrigger, Node } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { NodeDefinition, NodeKind } from "./definition.ts";

/**
 * Every node kind's definition, by its case of pipe.proto's `Node.kind` oneof: a kind without one is
 * a compile error. The validator, the worker and RunService read what they know of a kind here.
 */
export const NODE_DEFINITIONS = {
  httpTrigger: httpTriggerNode,
  emailTrigger: emailTriggerNode,
  parse: parseNode,
  callback: callbackNode,
  route: routeNode,
  review: reviewNode,
  extract: extractNode,
  classify: classifyNode,
  transform: transformNode,
  validate: validateNode,
  httpRequest: httpRequestNode,
  email: emailNode,
  chunk: chunkNode,
  split: splitNode,
  merge: mergeNode,
  dedupe: dedupeNode,
} as const satisfies { [K in NodeKind]: NodeDefinition<K> };

/** The node kinds, in the registry's order. */
export const NODE_KINDS = Object.keys(NODE_DEFINITIONS) as NodeKind[];

/** A node type as a step records it (run_steps.node_type): a kind's proto field name. */
export type NodeTypeName = (typeof NODE_DEFINITIONS)[NodeKind]["name"];

/** The proto field name of a node kind, such as "http_trigger". */
export function kindName(kind: NodeKind): NodeTypeName {
  return NODE_DEFINITIONS[kind].name;
}

/** A kind's definition, as every definition is typed. */
export function nodeDefinition(kind: NodeKind): NodeDefinition {
  return NODE_DEFINITIONS[kind];
}

/** The definition of a node's kind; undefined for a node of no kind (a kind this build does not know). */
export function definitionOfNode(node: Node): NodeDefinition | undefined {
  return node.kind.case === undefined ? undefined : NODE_DEFINITIONS[node.kind.case];
}

/** What a trigger accepts: every trigger kind's settings have both (see acceptance.ts). */
type Acceptance = Pick<HttpTrigger, "acceptedFormats" | "maxSizeMb">;

/** The formats and size a node accepts when it is a trigger; undefined for any other node. */
export function triggerAcceptance(node: Node | undefined): Acceptance | undefined {
  return node !== undefined && definitionOfNode(node)?.isTrigger === true ? (node.kind.value as Acceptance) : undefined;
}
