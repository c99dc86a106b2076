import type { Socket } from "node:net";
import ipaddr from "ipaddr.js";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

/** What one SMTP connection and all of them together may hold (EMAIL_* settings). */
export interface ConnectionLimits {
  /** Connections open at once; the next is answered 421 and closed. */
  maxConnections: number;
  /** Connections open at once from one client address (an IPv6 address by its /64); the next is answered 421 and closed. */
  maxConnectionsPerAddress: number;
  /** A session is answered 421 and closed this long after it connected, however busy. */
  sessionMaxMs: number;
  /** A session is answered 421 and closed after this long without a command that moves a message on. */
  idleMs: number;
  /** Commands one connection may send, NOOP included; the next is answered 421 and the connection closed. */
  maxCommandsPerConnection: number;
}

type Connection = SMTPServer["connections"] extends Set<infer C> ? C : never;

/**
 * Commands that move no message on: they are counted toward maxCommandsPerConnection, but do not
 * keep a session from being idle (a client sending NOOP every few seconds holds a descriptor as
 * long as it likes otherwise: the socket's own timeout sees traffic).
 */
const IDLE_COMMANDS = new Set(["NOOP", "RSET", "HELP", "VRFY", "EXPN"]);

/** IPv6 clients usually hold a whole /64: counted by it, as the edge counts addresses. */
const IPV6_CLIENT_PREFIX = 64;

/** The address a connection is counted under: IPv4 (mapped ones too) as is, IPv6 by its /64. */
function clientOf(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || !ipaddr.isValid(remoteAddress)) return remoteAddress ?? "";
  const parsed = ipaddr.process(remoteAddress);
  if (parsed.kind() === "ipv4") return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${IPV6_CLIENT_PREFIX}`).toString()}/${IPV6_CLIENT_PREFIX}`;
}

/** Answers a connection refused before its session starts, and closes it. */
function refuse(socket: Socket, reply: string): void {
  socket.on("error", () => {}); // a client gone before the reply is flushed
  socket.end(`${reply}\r\n`);
  // A client that never reads the reply nor closes its side does not keep the descriptor.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * smtp-server with the limits it lacks: connections overall and per client address (smtp-server's
 * maxClients counts only after a session object is made, and nothing per address), an absolute
 * session lifetime, a command budget per connection, and an idle timeout that commands moving no
 * message on (NOOP, RSET, HELP, VRFY, EXPN) do not reset. Each is answered 421, as RFC 5321 lets a
 * server close a connection at any time; a client retries later.
 */
export class LimitedSmtpServer extends SMTPServer {
  readonly #limits: ConnectionLimits;
  /** Open connections per client address; an address leaves the map when its last closes. */
  readonly #perAddress = new Map<string, number>();
  #open = 0;

  constructor(options: SMTPServerOptions, limits: ConnectionLimits) {
    // smtp-server's own idle timeout (any traffic resets it) covers silent clients and a stalled message.
    super({ ...options, socketTimeout: limits.idleMs });
    this.#limits = limits;
  }

  /** Connections open now (refused ones are not counted). */
  get openConnections(): number {
    return this.#open;
  }

  override connect(socket: Socket, socketOptions: Parameters<SMTPServer["connect"]>[1]): void {
    const limits = this.#limits;
    if (this.#open >= limits.maxConnections) return refuse(socket, "421 4.7.0 too many connections now; try again later");
    const client = clientOf(socket.remoteAddress);
    const fromClient = this.#perAddress.get(client) ?? 0;
    if (fromClient >= limits.maxConnectionsPerAddress) {
      return refuse(socket, `421 4.7.0 too many connections from your address (at most ${limits.maxConnectionsPerAddress}); try again later`);
    }
    this.#open++;
    this.#perAddress.set(client, fromClient + 1);
    super.connect(socket, socketOptions);
    // smtp-server adds the connection it made last to its set.
    const connection: Connection | undefined = Array.from(this.connections).at(-1);
    if (connection === undefined) return;
    const close = (reply: string) => connection.send(421, reply);
    const lifetime = setTimeout(() => close("4.4.2 this session has lasted as long as one may; closing"), limits.sessionMaxMs).unref();
    const idle = setTimeout(function expire() {
      // Not idle while the client waits for us (a handler deciding) or sends a message: smtp-server's timeout covers those.
      if (connection._handlerPending || connection._dataStream) idle.refresh();
      else close("4.4.2 no message moved on for too long; closing");
    }, limits.idleMs).unref();
    let commands = 0;
    const onCommand = connection._onCommand.bind(connection);
    connection._onCommand = (command, callback) => {
      commands++;
      if (commands > limits.maxCommandsPerConnection)
        return close(`4.7.0 too many commands on one connection (at most ${limits.maxCommandsPerConnection}); closing`);
      const name = command.toString("latin1", 0, 5).split(" ")[0]!.toUpperCase();
      if (!IDLE_COMMANDS.has(name)) idle.refresh();
      onCommand(command, callback);
    };
    socket.once("close", () => {
      clearTimeout(lifetime);
      clearTimeout(idle);
      this.#open--;
      const left = (this.#perAddress.get(client) ?? 1) - 1;
      if (left === 0) this.#perAddress.delete(client);
      else this.#perAddress.set(client, left);
    });
  }
}
