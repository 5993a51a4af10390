import { useState } from "react";
import { bootstrap, signIn, useSession } from "../session";

export function LoginPage() {
  const session = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
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
        {session.error && !error && <p className="form-error" role="alert">{session.error}</p>}
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
