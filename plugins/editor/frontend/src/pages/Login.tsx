import { useEffect, useState } from "react";
import { api, type SsoProviders } from "../api/client";
import { bootstrap, signIn, useSession } from "../session";

const SSO_ERRORS: Record<string, string> = {
  invalid_state: "The sign-in expired or did not start here. Please try again.",
  invalid_id_token: "The identity provider's answer could not be verified.",
  provider_denied: "The identity provider did not sign you in.",
  provider_error: "The identity provider answered with an error.",
  provider_unreachable: "The identity provider cannot be reached.",
  account_refused: "Your account cannot sign in here. Ask an administrator.",
};

function ssoErrorFromUrl(): string | null {
  const code = new URLSearchParams(window.location.search).get("sso_error");
  return code ? (SSO_ERRORS[code] ?? "Single sign-on failed.") : null;
}

export function LoginPage() {
  const session = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState<SsoProviders>({ providers: [], sso_only: false });
  const [ssoError] = useState(ssoErrorFromUrl);
  useEffect(() => {
    api.ssoProviders().then(setSso, () => undefined);
  }, []);
  return (
    <main className="login-page">
      <form
        className="login-card"
        aria-labelledby="login-title"
        onSubmit={async (e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          setBusy(true);
          setError(null);
          try {
            await signIn(String(fd.get("username")), String(fd.get("password")));
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <div className="brand">
          <img src="/favicon.svg" alt="" width={32} height={32} />
          <span>Flow Builder</span>
        </div>
        <h1 id="login-title">Sign in</h1>
        {ssoError && !error && (
          <p className="form-error" role="alert">
            {ssoError}
          </p>
        )}
        {session.error && !error && !ssoError && <p className="form-error" role="alert">{session.error}</p>}
        {sso.providers.map((p) => (
          <a key={p.slug} className="btn btn-primary btn-block sso-button" href={p.login_url}>
            Sign in with {p.display_name}
          </a>
        ))}
        {sso.sso_only && <p className="muted">Password sign-in is for the break-glass administrator only.</p>}
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <label className="field">
          <span>Username</span>
          <input name="username" autoComplete="username" required autoFocus />
        </label>
        <label className="field">
          <span>Password</span>
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button className="btn btn-primary btn-block" type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        {session.autoLogin !== false && session.error && (
          <button type="button" className="btn btn-link" onClick={() => void bootstrap()}>
            Try again
          </button>
        )}
      </form>
    </main>
  );
}
