import { create } from "@bufbuild/protobuf";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import type { ServiceClients } from "../../src/api/clients.ts";
import { BENCH_PLAN } from "./database.ts";

/** What the benchmarks submit as: an organization on the unlimited plan, its key and an active pipe. */
export interface Tenant {
  organizationId: string;
  defaultWorkspaceId: string;
  keyValue: string;
  pipeId: string;
}

/** A tenant on the unlimited plan whose pipe takes PDFs up to `maxSizeMb` and parses them, made through the services. */
export async function benchTenant(clients: ServiceClients, maxSizeMb: number): Promise<Tenant> {
  const { organization } = await clients.workspaces.createOrganization({ name: "Bench", plan: BENCH_PLAN });
  const organizationId = organization!.id;
  const { keyValue } = await clients.keys.createKey({ organizationId, name: "bench key" });
  const pipeId = await benchPipe(clients, organizationId, ["pdf"], maxSizeMb);
  return { organizationId, defaultWorkspaceId: organization!.defaultWorkspaceId, keyValue, pipeId };
}

/** An active pipe of the organization that takes `acceptedFormats` up to `maxSizeMb` and parses them. */
export async function benchPipe(clients: ServiceClients, organizationId: string, acceptedFormats: string[], maxSizeMb: number): Promise<string> {
  const { pipe } = await clients.pipes.createPipe({
    organizationId,
    name: "bench pipe",
    pipeline: create(PipelineSchema, {
      nodes: [
        { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats, maxSizeMb } } },
        { id: "parse", kind: { case: "parse", value: {} } },
      ],
    }),
  });
  await clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
  return pipe!.id;
}
