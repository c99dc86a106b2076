import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import Provider from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountService } from "../../gen/docpipe/v1/account_service_pb.js";
import { newId } from "../../src/platform/ids.ts";
import { insertAccount } from "../../src/data/repositories/accounts.ts";
import { type ConsoleServer, startConsoleServer } from "../console/harness.ts";
import { testDatabase } from "../support/database.ts";

// Single sign-on against a real OpenID provider (`oidc-provider`, its development login and consent
// pages), the service started as `npm start` runs it: a browser's redirects are followed by hand,
// each site's cookies kept apart.

const CLIENT = { id: "docpipe-console", secret: randomUUID() };

/** The provider's people: a login name, the email it vouches for and whether it says it is verified. */
const PEOPLE: Record<string, { email: string; verified: boolean }> = {};

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

/** A browser's cookies for one site, as `name=value` by name. */
class CookieJar {
  readonly #cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const name = pair.slice(0, pair.indexOf("="));
      if (/max-age=0/i.test(line) || /expires=thu, 01 jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, pair);
    }
  }

  header(): string {
    return [...this.#cookies.values()].join("; ");
  }

  has(name: string): boolean {
    return this.#cookies.has(name);
  }
}

describe("single sign-on with an OpenID provider", { timeout: 120_000 }, () => {
  let provider: Server;
  let issuer: string;
  let docpipe: ConsoleServer;
  let callbackUrl: string;

  beforeAll(async () => {
    const providerPort = await freePort();
    issuer = `http://127.0.0.1:${providerPort}`;
    const internalPort = await freePort();
    callbackUrl = `http://127.0.0.1:${internalPort}/auth/oidc/callback`;
    const oidc = new Provider(issuer, {
      clients: [
        { client_id: CLIENT.id, client_secret: CLIENT.secret, redirect_uris: [callbackUrl], grant_types: ["authorization_code"], response_types: ["code"] },
      ],
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
      findAccount: async (_context, sub) => ({
        accountId: sub,
        claims: async () => ({ sub, email: PEOPLE[sub]?.email, email_verified: PEOPLE[sub]?.verified }),
      }),
      cookies: { keys: [randomUUID()] },
    });
    provider = createServer(oidc.callback()).listen(providerPort, "127.0.0.1");
    await once(provider, "listening");
    docpipe = await startConsoleServer({
      INTERNAL_PORT: String(internalPort),
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: CLIENT.id,
      OIDC_CLIENT_SECRET: CLIENT.secret,
      OIDC_REDIRECT_URL: callbackUrl,
    });
  });
  afterAll(async () => {
    await docpipe?.close();
    provider?.closeAllConnections();
    provider?.close();
  });

  /** A person with an account (email, no password) and a login at the provider that vouches for `email`. */
  async function person(verified = true, withAccount = true): Promise<{ login: string; email: string }> {
    const login = `person-${randomUUID().slice(0, 8)}`;
    const email = `${login}@example.com`;
    PEOPLE[login] = { email, verified };
    if (withAccount) {
      await insertAccount(await testDatabase(), { id: newId(), email, name: login, password_hash: null, oidc_subject: null, create_time: new Date() });
    }
    return { login, email };
  }

  /**
   * What a browser does from the console's "Sign in with single sign-on" link until it is back on
   * the console: follows redirects, signs in and consents on the provider's pages. Returns where it
   * ended and the cookies docpipe set.
   */
  async function signInAs(login: string, tamper?: (callback: URL) => void): Promise<{ location: string; docpipeCookies: CookieJar }> {
    const docpipeCookies = new CookieJar();
    const providerCookies = new CookieJar();
    let response = await fetch(`${docpipe.internalUrl}/auth/oidc/start`, { redirect: "manual" });
    docpipeCookies.take(response);
    expect(response.status).toBe(302);
    let location = new URL(response.headers.get("location")!, docpipe.internalUrl);
    for (let hop = 0; hop < 20; hop++) {
      if (location.href.startsWith(callbackUrl)) {
        tamper?.(location);
        response = await fetch(location, { redirect: "manual", headers: { cookie: docpipeCookies.header() } });
        docpipeCookies.take(response);
        return { location: response.headers.get("location")!, docpipeCookies };
      }
      response = await fetch(location, { redirect: "manual", headers: { cookie: providerCookies.header() } });
      providerCookies.take(response);
      if (response.status >= 300 && response.status < 400) {
        location = new URL(response.headers.get("location")!, location);
        continue;
      }
      // The provider's login or consent page: submit its form.
      const page = await response.text();
      const action = new URL(/action="([^"]+)"/.exec(page)![1]!, location);
      const prompt = /name="prompt" value="(\w+)"/.exec(page)![1]!;
      const form = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt });
      response = await fetch(action, { method: "POST", redirect: "manual", headers: { cookie: providerCookies.header() }, body: form });
      providerCookies.take(response);
      location = new URL(response.headers.get("location")!, action);
    }
    throw new Error("the sign-in did not come back to docpipe");
  }

  function accounts(cookies: CookieJar) {
    const transport = createConnectTransport({
      baseUrl: docpipe.internalUrl,
      httpVersion: "1.1",
      interceptors: [
        (next) => (request) => {
          request.header.set("cookie", cookies.header());
          request.header.set("x-docpipe-console", "1");
          return next(request);
        },
      ],
    });
    return createClient(AccountService, transport);
  }

  it("the console offers it (settings.json says so)", async () => {
    expect(await (await fetch(`${docpipe.internalUrl}/console/settings.json`)).json()).toMatchObject({ singleSignOn: true });
  });

  it("a person whose verified email is an account's is signed in: back on the console with a session that works", async () => {
    const { login, email } = await person();
    const { location, docpipeCookies } = await signInAs(login);
    expect(location).toBe("/console/");
    expect(docpipeCookies.has("docpipe_session")).toBe(true);
    expect(docpipeCookies.has("docpipe_sso")).toBe(false);
    const { account } = await accounts(docpipeCookies).getCurrentAccount({});
    expect(account?.email).toBe(email);
    // The audit log has the sign-in.
    const events = await (await testDatabase()).selectFrom("audit_events").select(["action", "outcome"]).where("actor_name", "=", email).execute();
    expect(events).toContainEqual({ action: "sign_in_sso", outcome: "ok" });
  });

  it("the first sign-in links the provider's identity: another identity vouching for the same email later is refused", async () => {
    const { login, email } = await person();
    expect((await signInAs(login)).location).toBe("/console/");
    const impostor = `person-${randomUUID().slice(0, 8)}`;
    PEOPLE[impostor] = { email, verified: true };
    const { location, docpipeCookies } = await signInAs(impostor);
    expect(location).toBe("/console/#/sign-in?sso=sso_account_unknown");
    expect(docpipeCookies.has("docpipe_session")).toBe(false);
  });

  it("an email that is no account's gets no session, and the sign-in page says why", async () => {
    const { login } = await person(true, false);
    const { location, docpipeCookies } = await signInAs(login);
    expect(location).toBe("/console/#/sign-in?sso=sso_account_unknown");
    expect(docpipeCookies.has("docpipe_session")).toBe(false);
  });

  it("an email the provider does not say is verified gets no session", async () => {
    const { login } = await person(false);
    const { location, docpipeCookies } = await signInAs(login);
    expect(location).toBe("/console/#/sign-in?sso=sso_email_unverified");
    expect(docpipeCookies.has("docpipe_session")).toBe(false);
  });

  it("a callback whose state was tampered with is refused, and its code is never exchanged", async () => {
    const { login } = await person();
    const { location, docpipeCookies } = await signInAs(login, (callback) => callback.searchParams.set("state", "forged"));
    expect(location).toBe("/console/#/sign-in?sso=sso_failed");
    expect(docpipeCookies.has("docpipe_session")).toBe(false);
  });

  it("a callback without the state cookie (started in another browser) is refused", async () => {
    const response = await fetch(`${callbackUrl}?code=anything&state=anything`, { redirect: "manual" });
    expect([response.status, response.headers.get("location")]).toEqual([302, "/console/#/sign-in?sso=sso_state_invalid"]);
  });
});
