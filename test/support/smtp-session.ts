import { connect } from "node:net";

/** A raw SMTP session with the server on 127.0.0.1:`port`, for dialogues nodemailer does not hold (RSET, several sessions at once): each command's final reply line. */
export async function rawSmtpSession(port: number, localAddress?: string) {
  const socket = connect({ port, host: "127.0.0.1", localAddress });
  let buffer = "";
  const waiting: ((line: string) => void)[] = [];
  /** Every final reply line, in order (a 421 the server sends unasked among them). */
  const lines: string[] = [];
  socket.on("error", () => {}); // a connection the server resets
  socket.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("latin1");
    for (let end = buffer.indexOf("\r\n"); end !== -1; end = buffer.indexOf("\r\n")) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (/^\d{3} /.test(line)) {
        lines.push(line);
        waiting.shift()?.(line);
      }
    }
  });
  const reply = () => new Promise<string>((resolve) => waiting.push(resolve));
  /** Resolves once the server has closed the connection. */
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  /** The server's first reply: 220, or 421 for a connection it refuses. */
  const greeting = await reply();
  const command = (text: string) => {
    const replied = reply();
    socket.write(`${text}\r\n`);
    return replied;
  };
  /** Sends DATA and the message; resolves to the reply to the message, or "no reply" after `timeoutMs`. */
  const data = async (message: string, timeoutMs = 10_000) => {
    const ready = await command("DATA");
    if (!ready.startsWith("354")) return ready;
    const replied = reply();
    socket.write(`${message.replace(/\r?\n/g, "\r\n")}\r\n.\r\n`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("no reply"), timeoutMs)));
    try {
      return await Promise.race([replied, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  /** Writes raw text (part of a message) as it is; resolves once the socket has taken it. */
  const write = (text: string) => new Promise<void>((resolve) => socket.write(text, () => resolve()));
  return { greeting, lines, command, data, write, closed, close: () => socket.destroy() };
}
