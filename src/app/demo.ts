import { create } from "@bufbuild/protobuf";
import { Role } from "../../gen/docpipe/v1/account_pb.js";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import type { ServiceClients } from "../api/clients.ts";

export interface Demo {
  organizationId: string;
  pipeId: string;
  keyValue: string;
  /** The token of the owner's invitation link: whoever opens it first becomes the organization's owner. */
  ownerInvitationToken: string;
}

/**
 * A first start on an empty database gets something to call at once: an organization on the
 * Advanced plan, an active pipe with an HTTP trigger (pdf, png, jpeg; 10 MB), a key, and a one-time
 * invitation link that makes whoever opens it the organization's owner (their email and password).
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
  const { invitationToken } = await clients.members.createInvitation({ organizationId, email: "", role: Role.OWNER });
  return { organizationId, pipeId: pipe!.id, keyValue, ownerInvitationToken: invitationToken };
}

/** The banner printed once, with the only copies of the demo key and of the owner's sign-up link. */
export function demoBanner(demo: Demo, edgeUrl: string, consoleUrl: string | undefined): string {
  return [
    "",
    "docpipe: first start, demo data created. This key is shown only now:",
    "",
    `  curl -i -H 'X-Api-Key: ${demo.keyValue}' -F 'file=@document.pdf;type=application/pdf' \\`,
    `    ${edgeUrl}/pipes/${demo.pipeId}/trigger`,
    "",
    ...(consoleUrl === undefined
      ? []
      : [
          "Open this link once, within 7 days, to become the owner (choose your email and password):",
          "",
          `  ${consoleUrl}#/invitation/${demo.ownerInvitationToken}`,
          "",
        ]),
  ].join("\n");
}
