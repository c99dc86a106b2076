import { storableValue } from "../../data/db/storable.ts";

/**
 * The most bytes a step's output may take as JSON. It is stored in the run's steps, carried in the
 * run data to every later node and the callback, and returned by GetRun: a 30 MB output was stored
 * whole and stalled the service 3.3 s on each GetRun.
 */
export const MAX_STEP_OUTPUT_BYTES = 8 * 1024 * 1024;
/** The code of a step whose output is past MAX_STEP_OUTPUT_BYTES. */
export const OUTPUT_TOO_LARGE = "output_too_large";

/** A step's output made storable, or the step's error when it is past MAX_STEP_OUTPUT_BYTES (checked before it is stored). */
export function storableOutput(output: unknown): { value: unknown } | { error: string } {
  const value = storableValue(output);
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? "null");
  if (bytes <= MAX_STEP_OUTPUT_BYTES) return { value };
  return { error: `${OUTPUT_TOO_LARGE}: the step's output is ${bytes} bytes as JSON; a step's output is at most ${MAX_STEP_OUTPUT_BYTES} bytes` };
}
