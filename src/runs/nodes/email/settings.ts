import type { EmailNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { compileExpression } from "../../sandbox/expressions.ts";
import { requireText } from "../settings.ts";

/** Recipients and subject are set, and every expression compiles. */
export function checkEmailSettings(email: EmailNode, path: string): void {
  requireText(email.to, `${path}.to`, "a recipients expression");
  requireText(email.subject, `${path}.subject`, "a subject expression");
  for (const [field, source] of [
    ["to", email.to],
    ["subject", email.subject],
    ["body", email.body],
  ] as const) {
    if (source !== "") compileExpression(source, `${path}.${field}`);
  }
}
