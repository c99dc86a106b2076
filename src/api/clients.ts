import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { KeyService } from "../../gen/docpipe/v1/key_service_pb.js";
import { MemberService } from "../../gen/docpipe/v1/member_service_pb.js";
import { PipeService } from "../../gen/docpipe/v1/pipe_service_pb.js";
import { RunService } from "../../gen/docpipe/v1/run_service_pb.js";
import { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { clientTracingInterceptor, traceparentInterceptor, tracingOn } from "../platform/observability/tracing.ts";

/**
 * What a client of the services puts around its calls when tracing is on: its context as
 * `traceparent`; over the network, in a client span of its own.
 */
export function clientInterceptors(where: "in-process" | "remote"): Interceptor[] {
  if (!tracingOn()) return [];
  return [where === "remote" ? clientTracingInterceptor() : traceparentInterceptor()];
}

/** Typed clients of every docpipe service, over one transport. */
export interface ServiceClients {
  keys: Client<typeof KeyService>;
  pipes: Client<typeof PipeService>;
  runs: Client<typeof RunService>;
  workspaces: Client<typeof WorkspaceService>;
  members: Client<typeof MemberService>;
  /** What the edge calls; the only client an edge talking to a remote services process uses. */
  trigger: Client<typeof TriggerService>;
}

export function createServiceClients(transport: Transport): ServiceClients {
  return {
    keys: createClient(KeyService, transport),
    pipes: createClient(PipeService, transport),
    runs: createClient(RunService, transport),
    workspaces: createClient(WorkspaceService, transport),
    members: createClient(MemberService, transport),
    trigger: createClient(TriggerService, transport),
  };
}

/**
 * The services of another process, over HTTP/2 in protobuf's binary format, with a bearer token when one is configured (the edge
 * gives TRIGGER_TOKEN, or INTERNAL_TOKEN when there is none).
 */
export function remoteTransport(baseUrl: string, token: string | undefined): Transport {
  const interceptors: Interceptor[] = clientInterceptors("remote");
  if (token !== undefined) {
    interceptors.push((next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    });
  }
  // Binary, not JSON: the services read JSON strictly (an unknown field is refused), so during a
  // rolling deploy a newer edge's new field would fail every call to an older services process;
  // protobuf's binary rule skips it. Smaller and cheaper to encode, too.
  return createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, interceptors });
}
