/** What evaluating an expression gave: its value as JSON (undefined: no value), or JSONata's error. */
export type Evaluation = { result: string | undefined } | { error: string };

export interface EvaluationRequest {
  id: number;
  expression: string;
  data: unknown;
}

export interface EvaluationAnswer {
  id: number;
  evaluation: Evaluation;
}

/** How long an expression may take in the browser before its worker is ended, as the service's sandbox allows. */
const TIME_BUDGET_MS = 1000;

/**
 * Evaluates expressions as one types, in a worker that is replaced when an evaluation outlives its
 * budget. Only the latest evaluation answers: an earlier one still running is superseded.
 */
export class ExpressionEvaluator {
  private worker: Worker | undefined;
  private latest = 0;

  evaluate(expression: string, data: unknown): Promise<Evaluation | undefined> {
    const id = ++this.latest;
    const worker = this.workerNow();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.stop();
        resolve(id === this.latest ? { error: `took longer than ${TIME_BUDGET_MS / 1000} s` } : undefined);
      }, TIME_BUDGET_MS);
      const answer = (event: MessageEvent<EvaluationAnswer>) => {
        if (event.data.id !== id) return;
        clearTimeout(timer);
        worker.removeEventListener("message", answer);
        resolve(id === this.latest ? event.data.evaluation : undefined);
      };
      worker.addEventListener("message", answer);
      worker.postMessage({ id, expression, data } satisfies EvaluationRequest);
    });
  }

  stop(): void {
    this.worker?.terminate();
    this.worker = undefined;
  }

  private workerNow(): Worker {
    this.worker ??= new Worker(new URL("./evaluate-worker.ts", import.meta.url), { type: "module" });
    return this.worker;
  }
}
