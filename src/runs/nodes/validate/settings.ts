import type { ValidateNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { compileExpression } from "../../sandbox/expressions.ts";
import { checkSchemaText } from "./validate.ts";

/** The schema's text is checked here and compiled apart, in a thread (see compileSchema); `select` compiles. */
export function checkValidateSettings(validate: ValidateNode, path: string): void {
  checkSchemaText(validate.schema, `${path}.schema`);
  if (validate.select !== "") compileExpression(validate.select, `${path}.select`);
}
