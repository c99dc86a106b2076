/// <reference lib="webworker" />
/**
 * Evaluates one JSONata expression against run data, off the page's thread: an expression that
 * loops for ever ends with this worker (the page terminates it), not with the tab.
 */
import jsonata from "jsonata";
import type { Evaluation, EvaluationAnswer, EvaluationRequest } from "./evaluate.ts";

const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (event: MessageEvent<EvaluationRequest>) => {
  const { id, expression, data } = event.data;
  let answer: Evaluation;
  try {
    const result: unknown = await jsonata(expression).evaluate(data);
    answer = { result: result === undefined ? undefined : JSON.stringify(result, null, 2) };
  } catch (error) {
    const { message, position } = error as { message?: string; position?: number };
    answer = { error: position === undefined ? String(message) : `at position ${position}: ${message}` };
  }
  scope.postMessage({ id, evaluation: answer } satisfies EvaluationAnswer);
};
