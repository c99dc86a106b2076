import type { Node, Pipeline } from "../../../gen/docpipe/v1/pipe_pb.js";
import { definitionOfNode } from "../nodes/registry.ts";
import type { SecretBox } from "../deliveries/secret-box.ts";
import { MASKED } from "../deliveries/preview-url.ts";
import { openHeaderValue, sealHeaderValue } from "../deliveries/sealed-headers.ts";

/** The settings of a kind whose definition names `credentials`: their headers and URL. */
interface CredentialSettings {
  headers: Record<string, string>;
  url: string;
}

/** A node's settings and how its URL is masked, when its kind carries credentials (callbacks, HTTP requests). */
function credentialsOf(node: Node) {
  const credentials = definitionOfNode(node)?.credentials;
  return credentials === undefined ? undefined : { credentials, settings: node.kind.value as CredentialSettings };
}

/** `node` with its settings' `changes`. */
function withSettings(node: Node, changes: Partial<CredentialSettings>): Node {
  return { ...node, kind: { ...node.kind, value: { ...node.kind.value, ...changes } } } as Node;
}

/**
 * A copy of `pipeline` with the header values of its callback and HTTP request nodes sealed (see
 * sealed-headers.ts). Only the services that store pipelines and the workers that send open them.
 */
export function sealCallbackHeaders(pipeline: Pipeline, box: SecretBox, organizationId: string): Pipeline {
  return mapCallbackHeaders(pipeline, (value) => sealHeaderValue(value, box, organizationId));
}

/** The pipeline with its callback header values opened (values stored before sealing pass as they are). */
export function openCallbackHeaders(pipeline: Pipeline, box: SecretBox, organizationId: string): Pipeline {
  return mapCallbackHeaders(pipeline, (value) => openHeaderValue(value, box, organizationId));
}

/**
 * A copy of `pipeline` with what its callback and HTTP request nodes send credentials in masked:
 * every header value, a callback URL's path and query (chat webhooks carry their token there), an
 * HTTP request's URL expression. What a caller who may not change the pipe sees.
 */
export function maskCallbackSecrets(pipeline: Pipeline): Pipeline {
  const nodes = pipeline.nodes.map((node) => {
    const carried = credentialsOf(node);
    if (carried === undefined) return node;
    const { credentials, settings } = carried;
    const headers = Object.fromEntries(Object.keys(settings.headers).map((name) => [name, MASKED]));
    return withSettings(node, { headers, url: credentials.maskUrl(settings.url) });
  });
  return { ...pipeline, nodes };
}

/**
 * A copy of `pipeline` (the given one is left as it is) with every header value of its callback and
 * HTTP request nodes mapped: both carry credentials for the systems they call.
 */
function mapCallbackHeaders(pipeline: Pipeline, map: (value: string) => string): Pipeline {
  const nodes = pipeline.nodes.map((node) => {
    const settings = credentialsOf(node)?.settings;
    if (settings === undefined) return node;
    return withSettings(node, { headers: Object.fromEntries(Object.entries(settings.headers).map(([name, value]) => [name, map(value)])) });
  });
  return { ...pipeline, nodes };
}
