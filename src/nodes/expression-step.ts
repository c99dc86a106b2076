import { conditionHolds, ExpressionError } from "../pipes/expressions.ts";

/** Code of a step whose JSONata expression failed at run time. */
export const EXPRESSION_ERROR = "expression_error";

/** Whether the condition holds; an expression's error is the step's error, with its field and position. */
export async function stepCondition(text: string, field: string, data: unknown): Promise<boolean> {
  try {
    return await conditionHolds(text, data);
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    throw new Error(`${EXPRESSION_ERROR}: ${field} at position ${error.position}: ${error.message}`);
  }
}
