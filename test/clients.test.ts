import { createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { PipeService } from "../gen/docpipe/v1/pipe_service_pb.js";
import { remoteTransport } from "../src/api/clients.ts";

it("the services of another process are called in protobuf's binary format, which skips fields an older services process does not know", async () => {
  const seen: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers["content-type"]);
    response.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const client = createClient(PipeService, remoteTransport(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "token"));
    await client.getPipe({ organizationId: "o", pipeId: "p" }).catch(() => {});
    // JSON is read strictly by the services: a newer edge's new field would fail every call.
    expect(seen).toEqual(["application/proto"]);
  } finally {
    server.close();
  }
});
