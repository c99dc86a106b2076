import type * as OpenIdClient from "openid-client";
import { lazySecretBox } from "../runs/deliveries/secret-box.ts";
import type { OidcSettings } from "../platform/config.ts";
import { newId } from "../platform/ids.ts";
import { findAccountByEmail, linkOidcSubject } from "../data/repositories/accounts.ts";
import { insertAuditEvent } from "../data/repositories/audit-events.ts";
import type { Sessions } from "./account-service.ts";
import type { ServiceDeps } from "./deps.ts";
import type { AnonymousGate } from "./anonymous-gate.ts";

/** The cookie that carries a sign-in's state, PKCE verifier and nonce from its start to its callback. */
const SSO_STATE_COOKIE = "docpipe_sso";
/** How long a person may take at the provider. */
const STATE_MAX_AGE_SECONDS = 600;
/** The sealing context of the state cookie (the box seals organization data under organization ids). */
const STATE_CONTEXT = "single-sign-on";

/** Why a sign-in at the provider did not give a session; shown to the person on the sign-in page. */
export class SingleSignOnError extends Error {
  override name = "SingleSignOnError";
  /** A stable code for the console: `sso_state_invalid`, `sso_failed`, `sso_email_unverified`, `sso_account_unknown` (no account, or one linked to another identity), `too_many_sign_in_attempts` (SIGN_IN_QUEUE sign-ins wait already). */
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

interface SignInState {
  state: string;
  verifier: string;
  nonce: string;
  /** Unix seconds after which the state is refused. */
  expires: number;
}

export interface SingleSignOn {
  /** Where to send the person (the provider's authorization URL) and the state cookie to set. */
  start(secure: boolean): Promise<{ location: string; cookie: string }>;
  /**
   * Finishes a sign-in at the callback URL the provider sent the person to: the code is exchanged,
   * the ID token checked (issuer, audience, nonce, PKCE, state) and its verified email must be an
   * account's. Returns the session cookie; throws a SingleSignOnError otherwise.
   */
  finish(callbackUrl: URL, cookieHeader: string | undefined, address: string, secure: boolean): Promise<{ cookie: string }>;
}

/** Set-Cookie that ends the state cookie (after its callback, whatever the outcome). */
export function clearedStateCookie(secure: boolean): string {
  return stateCookie("", 0, secure);
}

function stateCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  // Lax, not Strict: the provider sends the person back with a cross-site navigation, which must carry it.
  return `${SSO_STATE_COOKIE}=${value}; Path=/auth/oidc/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

let loaded: Promise<typeof OpenIdClient> | undefined;

/** openid-client, loaded on the first sign-in: a process that signs no one in (an edge, a worker) does not hold it. */
function openIdClient(): Promise<typeof OpenIdClient> {
  loaded ??= import("openid-client");
  return loaded;
}

/**
 * Sign-in with an OpenID provider (authorization code flow with PKCE, through `openid-client`). The
 * state between the redirect and the callback travels in an HttpOnly cookie sealed with the
 * service's key, so any process of the service can finish a sign-in another began. A provider's
 * verified email must belong to an account already (an owner invites people first): single sign-on
 * proves who someone is, membership says what they may do.
 */
export function createSingleSignOn(deps: ServiceDeps, settings: OidcSettings, sessions: Sessions, anonymous: AnonymousGate): SingleSignOn {
  const box = lazySecretBox(deps.config);
  let discovered: Promise<OpenIdClient.Configuration> | undefined;
  const configuration = () =>
    (discovered ??= openIdClient()
      .then((oidc) =>
        oidc.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
          // Plain HTTP is accepted by the configuration for a provider on loopback only.
          ...(new URL(settings.issuer).protocol === "http:" ? { execute: [oidc.allowInsecureRequests] } : {}),
          timeout: 10,
        }),
      )
      .catch((error: unknown) => {
        discovered = undefined; // a provider down at start-up is asked again next time
        throw new SingleSignOnError("sso_failed", `the identity provider could not be reached: ${(error as Error).message}`);
      }));

  const audit = (account: { id: string; name: string }, outcome: string, address: string) =>
    insertAuditEvent(deps.db, {
      id: newId(),
      organization_id: null,
      time: deps.now(),
      actor_kind: "account",
      actor_id: account.id,
      actor_name: account.name,
      action: "sign_in_sso",
      resource_type: "account",
      resource_id: account.id,
      address,
      outcome,
    });

  return {
    async start(secure) {
      const config = await configuration();
      const oidc = await openIdClient();
      const verifier = oidc.randomPKCECodeVerifier();
      const signIn: SignInState = {
        state: oidc.randomState(),
        verifier,
        nonce: oidc.randomNonce(),
        expires: Math.floor(deps.now().getTime() / 1000) + STATE_MAX_AGE_SECONDS,
      };
      const location = oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUrl,
        scope: "openid email profile",
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state: signIn.state,
        nonce: signIn.nonce,
      });
      const sealed = (await box()).seal(JSON.stringify(signIn), STATE_CONTEXT).toString("base64url");
      return { location: location.href, cookie: stateCookie(sealed, STATE_MAX_AGE_SECONDS, secure) };
    },

    async finish(callbackUrl, cookieHeader, address, secure) {
      const signIn = await openState(cookieValue(cookieHeader, SSO_STATE_COOKIE));
      if (signIn === undefined || signIn.expires < Math.floor(deps.now().getTime() / 1000)) {
        throw new SingleSignOnError("sso_state_invalid", "the sign-in took too long or did not start here; sign in again");
      }
      const config = await configuration();
      const oidc = await openIdClient();
      // The callback URL as registered (the request's own host may be a proxy's), with the provider's parameters.
      const current = new URL(settings.redirectUrl);
      current.search = callbackUrl.search;
      let claims: { sub: string; email?: unknown; email_verified?: unknown };
      try {
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: signIn.verifier,
          expectedState: signIn.state,
          expectedNonce: signIn.nonce,
          idTokenExpected: true,
        });
        const idToken = tokens.claims()!;
        // Providers put the email in the ID token, or only at the userinfo endpoint (scope claims).
        claims = idToken.email !== undefined ? idToken : await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
      } catch (error) {
        throw new SingleSignOnError("sso_failed", `the identity provider's answer was refused: ${(error as Error).message}`);
      }
      const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
      if (email === "" || claims.email_verified !== true) {
        throw new SingleSignOnError("sso_email_unverified", "the identity provider did not vouch for an email address");
      }
      // The database part waits at the anonymous gate, apart from the shared pool (the provider's answer does not hold a place).
      return anonymous.run(
        async () => {
          const account = await findAccountByEmail(deps.db, email);
          if (account === undefined) {
            throw new SingleSignOnError("sso_account_unknown", `no account has the email ${email}; ask an owner for an invitation`);
          }
          // The first sign-in links the provider's identity; later ones must be that identity, so an
          // address handed to someone else at the provider does not open the account.
          if (!(await linkOidcSubject(deps.db, account.id, `${settings.issuer}|${claims.sub}`))) {
            await audit({ id: account.id, name: account.email }, "sso_identity_mismatch", address);
            throw new SingleSignOnError("sso_account_unknown", `the account ${email} is linked to another identity at the provider`);
          }
          const cookie = await sessions.open(account, address, secure);
          await audit({ id: account.id, name: account.email }, "ok", address);
          return { cookie };
        },
        () => new SingleSignOnError("too_many_sign_in_attempts", "too many sign-ins are in progress; retry in a moment"),
      );
    },
  };

  async function openState(value: string | undefined): Promise<SignInState | undefined> {
    if (value === undefined || value === "") return undefined;
    try {
      return JSON.parse((await box()).open(Buffer.from(value, "base64url"), STATE_CONTEXT)) as SignInState;
    } catch {
      return undefined; // tampered with, or sealed by another key
    }
  }
}
