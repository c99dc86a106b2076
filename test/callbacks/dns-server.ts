import { createSocket, type Socket } from "node:dgram";
import { isIPv4 } from "node:net";
import ipaddr from "ipaddr.js";

const TYPE_A = 1;
const TYPE_AAAA = 28;

/**
 * A DNS server on loopback (UDP) for tests: answers A and AAAA queries for the names in `records`
 * (NXDOMAIN for others), or never answers at all when `silent`. Just enough of RFC 1035 for c-ares.
 */
export async function startDnsServer(records: Record<string, string[]>, silent = false): Promise<{ server: string; close: () => Promise<void> }> {
  const socket: Socket = createSocket("udp4");
  socket.on("message", (query, peer) => {
    if (silent) return;
    // The question: labels from byte 12, then type and class.
    const labels: string[] = [];
    let offset = 12;
    while (query[offset]! > 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]!).toString("latin1"));
      offset += query[offset]! + 1;
    }
    const questionEnd = offset + 5;
    const type = query.readUInt16BE(offset + 1);
    const known = records[labels.join(".").toLowerCase()];
    const answers = (known ?? []).filter((address) => (type === TYPE_A ? isIPv4(address) : type === TYPE_AAAA && !isIPv4(address)));
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(known === undefined ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const records_ = answers.map((address) => {
      const data = Buffer.from(ipaddr.parse(address).toByteArray());
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...records_]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
