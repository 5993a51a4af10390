import { useState, type ReactNode } from "react";
import { applyTheme, storedTheme, toggled } from "../lib/theme";
import { Icon } from "./Icon";
import { navigate } from "../router";
import { signOut, useSession } from "../session";
import { notifyError } from "./toast";

export function Link({ to, children, className, ...rest }: { to: string; children: ReactNode; className?: string; [k: string]: unknown }) {
  return (
    <a
      href={to}
      className={className}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
      {...rest}
    >
      {children}
    </a>
  );
}

export function TopBar({ children }: { children?: ReactNode }) {
  const session = useSession();
  return (
    <header className="topbar">
      <Link to="/" className="brand" aria-label="Flow Builder home">
        <img src="/favicon.svg" alt="" width={22} height={22} />
        <span>Flow Builder</span>
      </Link>
      <div className="topbar-middle">{children}</div>
      <nav className="topbar-right" aria-label="Account">
        {/* pages reached from the home page; the flow editor's toolbar needs the room, so they hide there */}
        <Link to="/files" className="btn btn-ghost nav-page">
          Files
        </Link>
        <Link to="/knowledge" className="btn btn-ghost nav-page">
          Knowledge
        </Link>
        <Link to="/teams" className="btn btn-ghost nav-page">
          Teams
        </Link>
        <Link to="/usage" className="btn btn-ghost nav-page">
          Usage
        </Link>
        {session.user?.is_superuser && (
          <Link to="/admin/governance" className="btn btn-ghost nav-page">
            Governance
          </Link>
        )}
        {session.user?.is_superuser && (
          <Link to="/admin" className="btn btn-ghost nav-page">
            Admin
          </Link>
        )}
        <ThemeToggle />
        <Link to="/settings" className="btn btn-ghost">
          Settings
        </Link>
        <span className="user-name" title="Signed in user">
          {session.user?.username}
        </span>
        {/* as the reference: under auto-login there is no sign-in to come back to, so no sign-out */}
        {!session.config.hide_logout_button && !session.autoLogin && (
          <button className="btn btn-ghost" onClick={() => signOut().catch((e) => notifyError(e, "Sign out failed"))}>
            Sign out
          </button>
        )}
      </nav>
    </header>
  );
}

/** Light/dark switch; until it is used the theme follows the system. */
function ThemeToggle() {
  const [choice, setChoice] = useState(storedTheme);
  const next = toggled(choice);
  return (
    <button
      type="button"
      className="btn btn-ghost theme-toggle"
      data-testid="theme-toggle"
      title={`Switch to the ${next} theme`}
      aria-label={`Switch to the ${next} theme`}
      onClick={() => {
        const chosen = toggled(choice); // what is shown now, read at click time (the system may have changed)
        applyTheme(chosen);
        setChoice(chosen);
      }}
    >
      <Icon name={next === "dark" ? "moon" : "sun"} size={16} />
    </button>
  );
}
