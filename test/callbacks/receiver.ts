import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll } from "vitest";

interface Delivery {
  method: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Decides each answer; by default 200. */
  respond: (delivery: Delivery, response: ServerResponse) => void;
}

/** A local HTTP server on 127.0.0.1 (port 0) recording every request; closed after the file's tests. */
export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: "", deliveries: [], respond: (_delivery, response) => response.end("ok") };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const delivery = { method: request.method ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") };
      receiver.deliveries.push(delivery);
      receiver.respond(delivery, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return receiver;
}
