import type http from "node:http";
import type http2 from "node:http2";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
type Handler = (request: Request, response: Response) => void;

/** The host name of a Host (or :authority) value, without its port, lowercased; IPv6 keeps its brackets. */
function hostName(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(0, value.indexOf("]") + 1);
  const colon = value.lastIndexOf(":");
  return colon === -1 ? value : value.slice(0, colon);
}

/**
 * Answers only requests whose Host names one of `allowed` ("*" allows any). A web page the operator
 * happens to open cannot reach the internal port by DNS rebinding: its requests carry the
 * attacker's host name. Refused requests get 421 Misdirected Request with a Connect-style JSON error.
 */
export function withHostAllowList(allowed: readonly string[], handler: Handler): Handler {
  if (allowed.includes("*")) return handler;
  const names = new Set(allowed);
  return (request, response) => {
    const host = request.headers[":authority"] ?? request.headers.host;
    if (typeof host === "string" && names.has(hostName(host))) return handler(request, response);
    const body = JSON.stringify({
      code: "permission_denied",
      message: `the internal port does not answer for host ${JSON.stringify(String(host ?? "").slice(0, 100))}; list it in INTERNAL_ALLOWED_HOSTS`,
    });
    (response as http.ServerResponse).writeHead(421, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    response.end(body);
  };
}
