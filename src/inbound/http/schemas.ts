/** JSON Schemas of the trigger route: Fastify validates and serializes with them, and the OpenAPI document reuses them. */

export const triggerParamsSchema = {
  type: "object",
  properties: { pipeId: { type: "string", description: "The target pipe (UUID). Anything else is 404." } },
  required: ["pipeId"],
} as const;

export const triggerHeadersSchema = {
  type: "object",
  properties: {
    "x-api-key": { type: "string", description: "API key, such as dp_..." },
    "x-workspace-id": { type: "string", description: "Workspace id (UUID); the organization's default workspace when absent." },
    "idempotency-key": { type: "string", description: "1..255 printable ASCII characters; a repeat within 24 h replays the first response." },
  },
} as const;

export const acceptedSchema = {
  type: "object",
  description: "The submission was accepted and a run was queued.",
  properties: {
    runId: { type: "string", format: "uuid" },
    fileId: { type: "string", format: "uuid" },
    pipeId: { type: "string", format: "uuid" },
    workspaceId: { type: "string", format: "uuid" },
    status: { type: "string", enum: ["Queued"] },
    file: {
      type: "object",
      properties: {
        name: { type: "string" },
        contentType: { type: "string" },
        format: { type: "string", description: "Format id detected from the bytes, such as pdf." },
        size: { type: "integer", description: "Bytes." },
        sha256: { type: "string", description: "SHA-256 of the bytes, lowercase hex." },
      },
      required: ["name", "contentType", "format", "size", "sha256"],
    },
    createdAt: { type: "string", format: "date-time" },
  },
  required: ["runId", "fileId", "pipeId", "workspaceId", "status", "file", "createdAt"],
} as const;
