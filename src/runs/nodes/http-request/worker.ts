import { openHeaders } from "../../deliveries/sealed-headers.ts";
import type { NodeWorker } from "../node-executor.ts";
import { nodeContext } from "../run-document.ts";
import { runHttpRequest } from "./http-request.ts";

/** An HTTP request calls out with its header values opened, within the worker's outbound settings. */
export const httpRequestWorker = {
  execute: async (node, data, step) => {
    const { execution, state } = step;
    const box = await execution.outbound.secretBox();
    return runHttpRequest(node.kind.value, data, {
      ...nodeContext(step),
      allowPrivateNetworks: execution.outbound.allowPrivateNetworks,
      backoffMs: execution.outbound.backoffMs,
      openHeaders: (headers) => openHeaders(headers, box, state.run.organization_id),
    });
  },
} satisfies NodeWorker<"httpRequest">;
