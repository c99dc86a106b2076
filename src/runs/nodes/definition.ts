import type { Node } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { SandboxCaller } from "../sandbox/pool.ts";
import type { FormHints } from "./form-hints.ts";
import type { RunData } from "./run-data.ts";

/** A node kind: a case of pipe.proto's `Node.kind` oneof, such as "httpTrigger". */
export type NodeKind = NonNullable<Node["kind"]["case"]>;

/** A node of one kind, its settings typed. */
export type NodeOf<K extends NodeKind> = Node & { kind: Extract<Node["kind"], { case: K }> };

/** Operator limits a pipeline is checked against; they may change, so a saved pipeline is rechecked on activation. */
export interface PipelineLimits {
  maxSizeMbLimit: number;
  /** Whether callbacks may target loopback, private and link-local addresses (CALLBACK_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateCallbacks: boolean;
}

/** The settings message of a kind, such as RouteNode. */
type SettingsOf<K extends NodeKind> = Extract<Node["kind"], { case: K }>["value"];

/**
 * A kind whose settings carry credentials for the system it calls: its `headers` values, stored
 * sealed, and its `url`, which a caller who may not change the pipe sees masked.
 */
interface Credentials {
  /** The node's `url` as such a caller sees it. */
  maskUrl(url: string): string;
}

/** One edge's origin: the field that names it, relative to its node (such as "next[0]" or "route.routes[1].to[0]"). */
export interface Edge {
  field: string;
  /** The node id the field names. */
  target: string;
}

/**
 * Everything the service knows about one node kind besides its settings message (pipe.proto): each
 * kind exports one, in its folder src/runs/nodes/<kind>/, and src/runs/nodes/registry.ts collects them.
 */
export interface NodeDefinition<K extends NodeKind = NodeKind> {
  /** The proto field name: in field paths, in assigned node ids ("parse-1"), and as a run step's node type (run_steps.node_type). */
  readonly name: string;
  /** How RunService shows a step of the kind. */
  readonly nodeType: NodeType;
  /** Starts a run: a pipeline starts with one or two triggers (an HTTP trigger first). */
  readonly isTrigger?: true;
  /** A trigger that may also come second, right after a trigger of this kind (an email trigger after an HTTP trigger). */
  readonly mayFollowTrigger?: NodeKind;
  /**
   * It passes on through fields of its settings (a route's routes and otherwise, which may name a
   * node twice), not through `next`, and never ends a branch: `passesOnThrough` says which fields.
   */
  edges?(settings: SettingsOf<K>): Edge[];
  readonly passesOnThrough?: string;
  /** It parses the document: the node an extract or classify `source` names, and the one a chunk node needs before it. */
  readonly parses?: true;
  /** It must come after a parse node on every way to it: why, as the refusal says it ("a chunk node cuts a parse node's elements"). */
  readonly needsParse?: string;
  /** It reads a parse output: the parse node id its settings name, or "" for the run's first output shaped like one. */
  parseSource?(settings: SettingsOf<K>): string;
  /** It splits the run into parts' runs (at most one a pipeline; a rerun cannot start after it). */
  readonly splits?: true;
  /** It gathers the parts' runs of the split before it (at most one a pipeline). */
  readonly merges?: true;
  /**
   * Its step is not written as running: it reads only the run data (no side effect) and takes well
   * under a millisecond, or (a callback) its one write is idempotent. Its step is written once it
   * has ended, together with the next step that starts or when the run ends, in one statement: an
   * attempt that dies before that evaluates it again.
   */
  readonly instant?: true;
  /**
   * Its output may be read by an extract or classify node with an empty `source`: "the run's first
   * parse output" is the first output shaped like one, which a transform may give as well as a parse
   * node (an HTTP request's output is `{status, body}`, never shaped like one).
   */
  readonly passesOnParse?: true;
  readonly form: FormHints;
  readonly credentials?: Credentials;
  /**
   * Checks its settings as a pipe is saved (and again on activation, against today's limits):
   * compiles what it will run and throws the StepError `settings_invalid` naming the field (`path`
   * is the settings' own, such as "pipeline.nodes[2].route"). Absent for a kind without settings.
   */
  check?(settings: SettingsOf<K>, path: string, limits: PipelineLimits): void;
  /**
   * Checks as a pipe is saved what takes a sandbox thread (a validate node's JSON Schema), throwing
   * as `check` does; a saved pipe's are not checked again on activation.
   */
  checkInThread?(settings: SettingsOf<K>, path: string): Promise<void>;
  /**
   * Its output as a reviewer corrected it, typed as the kind's output is (an extract field's text as
   * the field's type); throws a ReviewDataError naming the member it refuses.
   */
  typedCorrection?(settings: SettingsOf<K>, output: unknown, nodeId: string): unknown;
  /** Its output again on the run data as a reviewer corrected it (without its own output), as a validate node checks again. */
  rerunOnCorrection?(settings: SettingsOf<K>, input: RunData, caller: SandboxCaller, nodeId: string): Promise<unknown>;
}
