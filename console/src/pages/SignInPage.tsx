import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { acceptInvitation, signIn } from "../../../gen/docpipe/v1/account_service-AccountService_connectquery.js";
import { ErrorNotice, Field } from "../components.tsx";
import { describeError } from "../errors.ts";
import { routeHash } from "../route.ts";
import { landingPageOf } from "../permissions.ts";
import { useSettings } from "../settings.ts";
import { internalToken } from "../transport.ts";

/** Why a sign-in with the OpenID provider gave no session (the service sends the browser back with `#/sign-in?sso=<code>`). */
const SSO_REFUSALS: Record<string, string> = {
  sso_account_unknown: "Your identity provider's email is not an account here. Ask an owner of your organization for an invitation.",
  sso_email_unverified: "Your identity provider did not confirm your email address.",
  sso_state_invalid: "The sign-in took too long or was started elsewhere. Try again.",
  sso_failed: "The identity provider's answer could not be used. Try again, or sign in with your password.",
};

function ssoRefusal(): string | undefined {
  const code = new URLSearchParams(location.hash.split("?")[1] ?? "").get("sso");
  return code === null ? undefined : (SSO_REFUSALS[code] ?? SSO_REFUSALS.sso_failed);
}

/** Signing in with an email and password (the session is an HttpOnly cookie), single sign-on when offered, or as the operator with INTERNAL_TOKEN. */
export function SignInPage({ tokenRejected }: { tokenRejected: boolean }) {
  const settings = useSettings();
  const refusal = ssoRefusal();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [token, setToken] = useState("");
  const session = useMutation(signIn, { onSuccess: () => queryClient.resetQueries() });
  const problem = session.error ? describeError(session.error) : undefined;
  const useToken = (event: FormEvent) => {
    event.preventDefault();
    internalToken.save(token);
    void queryClient.resetQueries();
  };
  return (
    <main className="single">
      <h1>Sign in to docpipe</h1>
      {refusal && (
        <p className="notice error" role="alert">
          {refusal}
        </p>
      )}
      {settings?.singleSignOn && (
        <div className="card">
          <a className="button primary" href="/auth/oidc/start">
            Sign in with single sign-on
          </a>
        </div>
      )}
      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          session.mutate({ email, password });
        }}
      >
        <Field label="Email">
          {(control) => <input {...control} type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />}
        </Field>
        <Field label="Password" error={problem?.reason === "sign_in_failed" ? "The email or password is wrong." : undefined}>
          {(control) => (
            <input
              {...control}
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          )}
        </Field>
        {problem && problem.reason !== "sign_in_failed" && <ErrorNotice error={session.error} />}
        <button className="primary" type="submit" disabled={session.isPending}>
          Sign in
        </button>
      </form>
      <details className="card" open={tokenRejected}>
        <summary>Sign in as the operator (INTERNAL_TOKEN)</summary>
        <form onSubmit={useToken}>
          <Field label="Internal token" error={tokenRejected ? "That token was not accepted." : undefined}>
            {(control) => <input {...control} type="password" autoComplete="off" required value={token} onChange={(event) => setToken(event.target.value)} />}
          </Field>
          <button type="submit">Continue</button>
        </form>
      </details>
    </main>
  );
}

/** An invitation link: join its organization, making an account unless already signed in. */
export function InvitationPage({ token }: { token: string }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const accept = useMutation(acceptInvitation, {
    onSuccess: async ({ membership }) => {
      await queryClient.resetQueries();
      // A reviewer reads no pipes: the review queue instead.
      const page = landingPageOf(membership!.role, "pipes");
      const org = membership!.organizationId;
      location.assign(page === "review" ? routeHash({ page, org, runId: "" }) : routeHash({ page, org }));
    },
  });
  const problem = accept.error ? describeError(accept.error) : undefined;
  return (
    <main className="single">
      <h1>Join an organization</h1>
      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          accept.mutate({ invitationToken: token, name, email, password });
        }}
      >
        <p>Make your account: the invitation gives you a role in its organization. If you already have an account, sign in first and open the link again.</p>
        <Field label="Your name" error={problem?.field === "name" ? problem.message : undefined}>
          {(control) => <input {...control} autoComplete="name" required value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field label="Email" hint="Used only when the invitation names none." error={problem?.field === "email" ? problem.message : undefined}>
          {(control) => <input {...control} type="email" autoComplete="username" value={email} onChange={(event) => setEmail(event.target.value)} />}
        </Field>
        <Field label="Password" hint="At least 12 characters." error={problem?.field === "password" ? problem.message : undefined}>
          {(control) => (
            <input {...control} type="password" autoComplete="new-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
          )}
        </Field>
        {problem && problem.field === undefined && <ErrorNotice error={accept.error} />}
        <button className="primary" type="submit" disabled={accept.isPending}>
          Join
        </button>
      </form>
    </main>
  );
}
