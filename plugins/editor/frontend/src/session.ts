// Who is signed in, and the server configuration (shared by every page).
import { useSyncExternalStore } from "react";
import { api, type Config, type User } from "./api/client";
import { ApiError } from "./lib/errors";

export interface Session {
  status: "loading" | "signed-in" | "signed-out";
  user?: User;
  config: Config;
  autoLogin?: boolean;
  error?: string;
}

let session: Session = { status: "loading", config: {} };
const subs = new Set<() => void>();

function set(s: Partial<Session>) {
  session = { ...session, ...s };
  subs.forEach((f) => f());
}

export function useSession(): Session {
  return useSyncExternalStore(
    (f) => {
      subs.add(f);
      return () => subs.delete(f);
    },
    () => session,
  );
}

export function getSession() {
  return session;
}

// Remembered between visits so a first load asks only questions that succeed (no 401/403 in the
// console): whether this browser had a session (then an expired access token is worth a refresh),
// and whether the server refused auto-login (then the login page shows at once).
const HAD_SESSION = "service.hadSession";
const AUTO_LOGIN_OFF = "service.autoLoginOff";
// this browser's session came from auto-login (so a reload with the session cookie still hides "Sign out")
const AUTO_LOGIN_ON = "service.autoLoginOn";

function remember(key: string, on: boolean) {
  try {
    if (on) localStorage.setItem(key, "1");
    else localStorage.removeItem(key);
  } catch {
    /* private mode */
  }
}

function remembered(key: string): boolean {
  try {
    return localStorage.getItem(key) === "1";
  } catch {
    return false;
  }
}

async function loadSignedIn() {
  const [user, config] = await Promise.all([api.whoami(), api.config().catch(() => session.config)]);
  remember(HAD_SESSION, true);
  set({ status: "signed-in", user, config, error: undefined });
}

function signedOut(autoLogin: boolean | undefined, error?: string) {
  set({ status: "signed-out", autoLogin, error });
  api.config().then((config) => set({ config })).catch(() => undefined);
}

/** On start: an existing cookie session, else auto-login when the server allows it, else the login page.
 *
 * ``GET /session`` answers 200 either way, so nothing fails before we know what to ask next.
 */
export async function bootstrap() {
  let authenticated = false;
  try {
    authenticated = (await api.session()).authenticated;
  } catch (e) {
    set({ status: "signed-out", error: e instanceof Error ? e.message : String(e) });
    return;
  }
  if (!authenticated && remembered(HAD_SESSION)) {
    // the access token may have expired while the refresh token is still good
    authenticated = await api.refresh().then(
      () => true,
      () => false,
    );
    if (!authenticated) remember(HAD_SESSION, false);
  }
  if (authenticated) {
    try {
      if (remembered(AUTO_LOGIN_ON)) set({ autoLogin: true });
      await loadSignedIn();
      return;
    } catch (e) {
      if (!(e instanceof ApiError) || (e.status !== 401 && e.status !== 403)) {
        set({ status: "signed-out", error: e instanceof Error ? e.message : String(e) });
        return;
      }
    }
  }
  if (remembered(AUTO_LOGIN_OFF)) return signedOut(false);
  try {
    await api.autoLogin();
    remember(AUTO_LOGIN_OFF, false);
    remember(AUTO_LOGIN_ON, true);
    set({ autoLogin: true });
    await loadSignedIn();
  } catch (e) {
    const autoOff = e instanceof ApiError && e.status === 403;
    if (autoOff) remember(AUTO_LOGIN_OFF, true);
    remember(AUTO_LOGIN_ON, false);
    signedOut(autoOff ? false : undefined, autoOff ? undefined : (e as Error).message);
  }
}

export async function signIn(username: string, password: string) {
  await api.login(username, password);
  remember(AUTO_LOGIN_ON, false);
  set({ autoLogin: false });
  await loadSignedIn();
}

export async function signOut() {
  remember(HAD_SESSION, false);
  let endSession: string | null = null;
  try {
    try {
      // the SSO plugin ends the local session too, and names the provider's sign-out for SSO sign-ins
      endSession = (await api.ssoLogout()).end_session_url ?? null;
    } catch {
      await api.logout();
    }
  } finally {
    set({ status: "signed-out", user: undefined, autoLogin: false });
  }
  if (endSession) window.location.assign(endSession);
}

let renewing = false;

export function markSignedOut() {
  // under auto-login an ended session is renewed the way it began, as the reference does: no sign-in form
  if (session.status === "signed-in" && session.autoLogin && !renewing) {
    renewing = true;
    void bootstrap().finally(() => (renewing = false));
    return;
  }
  if (session.status === "signed-in") set({ status: "signed-out", user: undefined, error: "Your session has expired. Please sign in again." });
}
