import { create } from "@bufbuild/protobuf";
import { PipelineSchema } from "../gen/docpipe/v1/pipe_pb.js";
import type { ServiceClients } from "./clients.ts";

export interface Demo {
  organizationId: string;
  pipeId: string;
  keyValue: string;
}

/**
 * A first start on an empty database gets something to call at once: an organization on the
 * Advanced plan, an active pipe with an HTTP trigger (pdf, png, jpeg; 10 MB) and a key.
 */
export async function seedDemo(clients: ServiceClients): Promise<Demo | undefined> {
  const existing = await clients.workspaces.listOrganizations({ pageSize: 1 });
  if (existing.organizations.length > 0) return undefined;
  const { organization } = await clients.workspaces.createOrganization({ name: "Demo", plan: "advanced" });
  const organizationId = organization!.id;
  const { pipe } = await clients.pipes.createPipe({
    organizationId,
    name: "Demo pipe",
    description: "Accepts PDF, PNG and JPEG files up to 10 MB and extracts their text and metadata.",
    pipeline: create(PipelineSchema, {
      nodes: [
        { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf", "png", "jpeg"], maxSizeMb: 10 } } },
        { id: "parse", kind: { case: "parse", value: {} } },
      ],
    }),
  });
  await clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
  const { keyValue } = await clients.keys.createKey({ organizationId, name: "Demo key (created on first start)" });
  return { organizationId, pipeId: pipe!.id, keyValue };
}

/** The banner printed once, with the only copy of the demo key. */
export function demoBanner(demo: Demo, edgeUrl: string): string {
  return [
    "",
    "docpipe: first start, demo data created. This key is shown only now:",
    "",
    `  curl -i -H 'X-Api-Key: ${demo.keyValue}' -F 'file=@document.pdf;type=application/pdf' \\`,
    `    ${edgeUrl}/pipes/${demo.pipeId}/trigger`,
    "",
  ].join("\n");
}
