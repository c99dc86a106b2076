import type { ConnectError } from "@connectrpc/connect";
import { type ErrorInfo, ErrorInfoSchema } from "../../gen/docpipe/v1/error_pb.js";

/**
 * The ErrorInfo a service put on an error (its stable reason and metadata), if any: read by the
 * edge to make a problem document, and by anyone else calling the services.
 */
export function errorInfoOf(error: ConnectError): ErrorInfo | undefined {
  return error.findDetails(ErrorInfoSchema)[0];
}
