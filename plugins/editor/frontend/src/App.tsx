import { lazy, Suspense, useEffect } from "react";
import { setSignedOutHandler } from "./api/client";
import { Toasts } from "./components/toast";
import { FilesPage } from "./pages/Files";
import { HomePage } from "./pages/Home";
import { LoginPage } from "./pages/Login";
import { PublicPlaygroundPage } from "./pages/PublicPlayground";
import { SettingsPage } from "./pages/Settings";
import { match, navigate, usePath } from "./router";
import { bootstrap, markSignedOut, useSession } from "./session";

// The canvas (and @xyflow/react) loads only when a flow is opened.
const EditorPage = lazy(() => import("./pages/Editor"));
// The less-used pages load when first visited (the first load stays small).
const AdminPage = lazy(() => import("./pages/Admin").then((m) => ({ default: m.AdminPage })));
const GovernancePage = lazy(() => import("./pages/Governance").then((m) => ({ default: m.GovernancePage })));
const KnowledgePage = lazy(() => import("./pages/Knowledge").then((m) => ({ default: m.KnowledgePage })));
const TeamsPage = lazy(() => import("./pages/Teams").then((m) => ({ default: m.TeamsPage })));
const ActivityPage = lazy(() => import("./pages/Activity").then((m) => ({ default: m.ActivityPage })));
const UsagePage = lazy(() => import("./pages/Usage").then((m) => ({ default: m.UsagePage })));

export function App() {
  const session = useSession();
  const path = usePath();

  useEffect(() => {
    setSignedOutHandler(markSignedOut);
    void bootstrap();
  }, []);

  const publicFlow = match("/playground/:id", path);

  useEffect(() => {
    if (publicFlow) return; // the public playground needs no session
    if (session.status === "signed-out" && path !== "/login") {
      const next = path + window.location.search;
      navigate(`/login${next && next !== "/" ? `?next=${encodeURIComponent(next)}` : ""}`, true);
    }
    if (session.status === "signed-in" && path === "/login") {
      const next = new URLSearchParams(window.location.search).get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/", true);
    }
  }, [session.status, path]);

  let page;
  if (publicFlow) page = <PublicPlaygroundPage flowId={publicFlow.id} />;
  else if (session.status === "loading") page = <div className="splash" aria-busy="true">Loading…</div>;
  else if (session.status === "signed-out" || path === "/login") page = <LoginPage />;
  else {
    let m: Record<string, string> | null;
    if ((m = match("/flow/:id/activity", path))) page = <ActivityPage key={m.id} flowId={m.id} />;
    else if ((m = match("/flow/:id", path))) page = <EditorPage key={m.id} flowId={m.id} />;
    else if (path === "/" || path === "/flows") page = <HomePage />;
    else if ((m = match("/projects/:id", path))) page = <HomePage projectId={m.id} />;
    else if (path === "/settings" || (m = match("/settings/:tab", path))) page = <SettingsPage tab={m?.tab ?? "api-keys"} />;
    else if (path === "/files") page = <FilesPage />;
    else if (path === "/knowledge") page = <KnowledgePage />;
    else if (path === "/teams") page = <TeamsPage />;
    else if (path === "/usage") page = <UsagePage />;
    else if (path === "/admin") page = <AdminPage />;
    else if (path === "/admin/governance" || (m = match("/admin/governance/:tab", path)))
      page = <GovernancePage tab={m?.tab ?? "components"} />;
    else
      page = (
        <div className="splash">
          <h1>Page not found</h1>
          <p>
            <a href="/" onClick={(e) => (e.preventDefault(), navigate("/"))}>
              Go to your flows
            </a>
          </p>
        </div>
      );
  }
  return (
    <>
      <Suspense fallback={<div className="splash" aria-busy="true">{match("/flow/:id", path) ? "Opening the editor…" : "Loading…"}</div>}>{page}</Suspense>
      <Toasts />
    </>
  );
}
