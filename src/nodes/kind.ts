import type { Node } from "../../gen/docpipe/v1/pipe_pb.js";

/** A node kind: a case of pipe.proto's `Node.kind` oneof, such as "httpTrigger". */
export type NodeKind = NonNullable<Node["kind"]["case"]>;

/** A node of one kind, its settings typed. */
export type NodeOf<K extends NodeKind> = Node & { kind: Extract<Node["kind"], { case: K }> };
