import type { ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import type { Logger } from "../../platform/logger.ts";
import { CONSOLE_PATH } from "./console.ts";
import { clearedStateCookie, type SingleSignOn, SingleSignOnError } from "../../api/single-sign-on.ts";

type Handler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;

/** Where a browser starts a sign-in with the OpenID provider, and where the provider sends it back. */
const SSO_START_PATH = "/auth/oidc/start";
const SSO_CALLBACK_PATH = "/auth/oidc/callback";

/**
 * The internal port's single sign-on routes in front of `next` (the console): GET /auth/oidc/start
 * redirects to the provider with the sign-in's state in a sealed cookie; GET /auth/oidc/callback
 * finishes it and redirects to the console, signed in, or to its sign-in page with the reason
 * (`#/sign-in?sso=<code>`). Without a provider configured both are 404, as any unknown path.
 */
export function withSingleSignOn(singleSignOn: SingleSignOn | undefined, secureCookies: boolean, log: Logger, next: Handler): Handler {
  return (request, response) => {
    const url = new URL(request.url ?? "/", "http://internal");
    if (singleSignOn === undefined || (url.pathname !== SSO_START_PATH && url.pathname !== SSO_CALLBACK_PATH)) return next(request, response);
    if (request.method !== "GET") {
      response.statusCode = 405;
      response.setHeader("allow", "GET");
      response.end();
      return;
    }
    const redirect = (location: string, cookies: string[]) => {
      response.statusCode = 302;
      response.setHeader("location", location);
      response.setHeader("set-cookie", cookies);
      response.setHeader("cache-control", "no-store");
      response.setHeader("referrer-policy", "no-referrer");
      response.end();
    };
    if (url.pathname === SSO_START_PATH) {
      singleSignOn.start(secureCookies).then(
        ({ location, cookie }) => redirect(location, [cookie]),
        (error: unknown) => {
          log.warn({ err: error }, "single sign-on could not start");
          redirect(`${CONSOLE_PATH}#/sign-in?sso=${codeOf(error)}`, []);
        },
      );
      return;
    }
    const address = request.socket.remoteAddress ?? "";
    singleSignOn.finish(url, request.headers.cookie, address, secureCookies).then(
      ({ cookie }) => redirect(CONSOLE_PATH, [cookie, clearedStateCookie(secureCookies)]),
      (error: unknown) => {
        log.warn({ code: codeOf(error), reason: (error as Error).message, address }, "single sign-on refused");
        redirect(`${CONSOLE_PATH}#/sign-in?sso=${codeOf(error)}`, [clearedStateCookie(secureCookies)]);
      },
    );
  };
}

function codeOf(error: unknown): string {
  return error instanceof SingleSignOnError ? error.code : "sso_failed";
}
