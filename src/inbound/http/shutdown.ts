import type { FastifyInstance } from "fastify";
import type { InFlight } from "./in-flight.ts";

/** Whether the edge is closing; new requests are then refused (the caller's onRequest hook asks). */
export interface ShutdownState {
  readonly closing: boolean;
}

/** The parts of the app a graceful close uses (any logger type). */
type ClosingApp = Pick<FastifyInstance, "log" | "server"> & { addHook(name: "preClose" | "onClose", hook: () => Promise<void>): unknown };

/**
 * A graceful close: once `app.close()` begins, the edge stops taking requests; those in flight may
 * finish until `timeoutMs`, then their connections are cut (a slow upload would otherwise hold
 * shutdown for ever) and each handler removes what it staged; the close resolves once every
 * submission has cleaned up after itself.
 */
export function drainOnClose(app: ClosingApp, timeoutMs: number, submissions: InFlight): ShutdownState {
  const state = { closing: false };
  let cutTimer: NodeJS.Timeout | undefined;
  app.addHook("preClose", async () => {
    state.closing = true;
    cutTimer = setTimeout(() => {
      if (submissions.count > 0) app.log.warn({ submissions: submissions.count }, "shutdown timeout reached: cutting the uploads still in flight");
      app.server.closeAllConnections();
    }, timeoutMs);
  });
  // Runs once the server has closed (every connection ended or cut): waits for the handlers' cleanup.
  app.addHook("onClose", async () => {
    clearTimeout(cutTimer);
    await submissions.idle();
  });
  return state;
}
