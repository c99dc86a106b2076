import { type Client, type ConnectRouter, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { KeyService } from "../gen/docpipe/v1/key_service_pb.js";
import { PipeService } from "../gen/docpipe/v1/pipe_service_pb.js";
import { RunService } from "../gen/docpipe/v1/run_service_pb.js";
import { WorkspaceService } from "../gen/docpipe/v1/workspace_service_pb.js";
import { createDirectTransport } from "./direct-transport.ts";

/** Typed clients of every docpipe service, over one transport. */
export interface ServiceClients {
  keys: Client<typeof KeyService>;
  pipes: Client<typeof PipeService>;
  runs: Client<typeof RunService>;
  workspaces: Client<typeof WorkspaceService>;
}

export function createServiceClients(transport: Transport): ServiceClients {
  return {
    keys: createClient(KeyService, transport),
    pipes: createClient(PipeService, transport),
    runs: createClient(RunService, transport),
    workspaces: createClient(WorkspaceService, transport),
  };
}

/** The services in this process, called directly (see createDirectTransport). */
export function inProcessTransport(routes: (router: ConnectRouter) => void): Transport {
  return createDirectTransport(routes);
}

/** The services of another process, over HTTP/2, with the internal token when one is configured. */
export function remoteTransport(baseUrl: string, token: string | undefined): Transport {
  const interceptors: Interceptor[] = token === undefined ? [] : [
    (next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    },
  ];
  return createConnectTransport({ baseUrl, httpVersion: "2", interceptors });
}
