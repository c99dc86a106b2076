import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../../platform/logger.ts";
import { serverTracingInterceptor, tracingOn } from "../../platform/observability/tracing.ts";
import { serviceError } from "../../api/errors.ts";
import type { ServiceAccess } from "../../api/routes.ts";
import { bearerTokenCheck } from "../../platform/auth/bearer-token.ts";

/** A caller without an Authorization header is anonymous: `authentication_required`, as on every other service. */
function anonymousRefused(authorization: string | null, message: string): void {
  if (authorization === null) throw serviceError(Code.Unauthenticated, "authentication_required", message);
}

/** Every RPC must carry `Authorization: Bearer <token>`; compared in constant time. */
function internalTokenInterceptor(token: string): Interceptor {
  const matches = bearerTokenCheck(token);
  return (next) => async (request) => {
    const authorization = request.header.get("authorization");
    if (!matches(authorization ?? undefined)) {
      anonymousRefused(authorization, "send Authorization: Bearer <TRIGGER_TOKEN> (or <INTERNAL_TOKEN> when no TRIGGER_TOKEN is set)");
      throw serviceError(
        Code.Unauthenticated,
        "internal_token_invalid",
        "missing or invalid token (Authorization: Bearer <INTERNAL_TOKEN>, or <TRIGGER_TOKEN> for TriggerService)",
      );
    }
    return next(request);
  };
}

/**
 * One log line per RPC: procedure, outcome and duration; never headers or messages. Failures other
 * than Internal and Unknown, and successes, are debug lines, built only when debug is on: the edge
 * makes three in-process calls per submission.
 */
function loggingInterceptor(log: Logger): Interceptor {
  const entry = (request: { service: { typeName: string }; method: { name: string } }, code: string, started: number) => ({
    procedure: `${request.service.typeName}/${request.method.name}`,
    code,
    ms: Math.round(performance.now() - started),
  });
  return (next) => (request) => {
    const started = performance.now();
    const failed = (error: unknown): never => {
      const connectError = ConnectError.from(error);
      const code = Code[connectError.code];
      if (connectError.code === Code.Internal || connectError.code === Code.Unknown) log.error({ ...entry(request, code, started), err: error }, "rpc failed");
      else if (log.isLevelEnabled("debug")) log.debug(entry(request, code, started), "rpc");
      throw connectError;
    };
    // Not an async function: a success at info level costs one promise (the catch), not three.
    if (!log.isLevelEnabled("debug")) return next(request).catch(failed);
    return next(request).then((response) => {
      log.debug(entry(request, "ok", started), "rpc");
      return response;
    }, failed);
  };
}

/** Without TRIGGER_TOKEN or INTERNAL_TOKEN no one may call TriggerService over the network: the edge calls it in-process. */
const triggerClosed: Interceptor = () => async (request) => {
  anonymousRefused(request.header.get("authorization"), "TriggerService is not served on this port: set TRIGGER_TOKEN to call it");
  throw serviceError(Code.Unauthenticated, "internal_token_invalid", "TriggerService is not served on this port: set TRIGGER_TOKEN to call it");
};

/**
 * What the internal server puts in front of every RPC: its span (tracing on), a log line, then who
 * calls. Management RPCs are made by a known caller (a session, a service token, or INTERNAL_TOKEN:
 * see the permission table); TriggerService needs TRIGGER_TOKEN, or INTERNAL_TOKEN when no
 * TRIGGER_TOKEN is set, and answers no one when neither is. With both set, neither token opens the
 * other group.
 */
export function internalAccess(log: Logger, tokens: { internalToken: string | undefined; triggerToken: string | undefined }): ServiceAccess {
  const logging = [...tracing(), loggingInterceptor(log)];
  const triggerToken = tokens.triggerToken ?? tokens.internalToken;
  return {
    management: logging,
    trigger: [...logging, triggerToken === undefined ? triggerClosed : internalTokenInterceptor(triggerToken)],
    callers: "credentials",
  };
}

/** The in-process transport's interceptors: the same log line (errors with their cause); the process is the caller. */
export function inProcessAccess(log: Logger): ServiceAccess {
  const logging = [...tracing(), loggingInterceptor(log)];
  return { management: logging, trigger: logging, callers: "process" };
}

/** With tracing on, a server span per RPC, outermost, so the log line and the token check are within it. */
function tracing(): Interceptor[] {
  return tracingOn() ? [serverTracingInterceptor()] : [];
}
