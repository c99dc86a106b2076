import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../logger.ts";
import { serviceError } from "../services/errors.ts";

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Every RPC must carry `Authorization: Bearer <token>`; compared in constant time. */
export function internalTokenInterceptor(token: string): Interceptor {
  const expected = digest(`Bearer ${token}`);
  return (next) => async (request) => {
    const given = digest(request.header.get("authorization") ?? "");
    if (!timingSafeEqual(given, expected)) {
      throw serviceError(Code.Unauthenticated, "internal_token_invalid", "missing or invalid internal token (Authorization: Bearer <INTERNAL_TOKEN>)");
    }
    return next(request);
  };
}

/** One log line per RPC: procedure, outcome and duration; never headers or messages. */
export function loggingInterceptor(log: Logger): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    const procedure = `${request.service.typeName}/${request.method.name}`;
    try {
      const response = await next(request);
      log.debug({ procedure, code: "ok", ms: Math.round(performance.now() - started) }, "rpc");
      return response;
    } catch (error) {
      const connectError = ConnectError.from(error);
      const entry = { procedure, code: Code[connectError.code], ms: Math.round(performance.now() - started) };
      if (connectError.code === Code.Internal || connectError.code === Code.Unknown) log.error({ ...entry, err: error }, "rpc failed");
      else log.debug(entry, "rpc");
      throw connectError;
    }
  };
}

/** What the internal server puts in front of every RPC: a log line, then the token check if one is configured. */
export function internalInterceptors(log: Logger, token: string | undefined): Interceptor[] {
  return token === undefined ? [loggingInterceptor(log)] : [loggingInterceptor(log), internalTokenInterceptor(token)];
}
