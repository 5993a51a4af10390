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

async function loadSignedIn() {
  const [user, config] = await Promise.all([api.whoami(), api.config().catch(() => session.config)]);
  set({ status: "signed-in", user, config, error: undefined });
}

/** On start: an existing cookie session, else auto-login when the server allows it, else the login page. */
export async function bootstrap() {
  try {
    await loadSignedIn();
    return;
  } catch (e) {
    if (!(e instanceof ApiError) || (e.status !== 401 && e.status !== 403)) {
      set({ status: "signed-out", error: e instanceof Error ? e.message : String(e) });
      return;
    }
  }
  try {
    await api.autoLogin();
    set({ autoLogin: true });
    await loadSignedIn();
  } catch (e) {
    const autoOff = e instanceof ApiError && e.status === 403;
    set({ status: "signed-out", autoLogin: autoOff ? false : undefined, error: autoOff ? undefined : (e as Error).message });
    api.config().then((config) => set({ config })).catch(() => undefined);
  }
}

export async function signIn(username: string, password: string) {
  await api.login(username, password);
  await loadSignedIn();
}

export async function signOut() {
  try {
    await api.logout();
  } finally {
    set({ status: "signed-out", user: undefined, autoLogin: false });
  }
}

export function markSignedOut() {
  if (session.status === "signed-in") set({ status: "signed-out", user: undefined, error: "Your session has expired. Please sign in again." });
}
