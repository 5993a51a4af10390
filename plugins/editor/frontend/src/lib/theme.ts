// Light or dark: follows the system (prefers-color-scheme) until the user picks one with the toggle.
export type ThemeChoice = "system" | "light" | "dark";

const KEY = "service.theme";

export function storedTheme(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : "system";
  } catch {
    return "system";
  }
}

const subs = new Set<() => void>();
let current: ThemeChoice = "system";

/** Subscribe to theme changes (for useSyncExternalStore). */
export function subscribeTheme(f: () => void): () => void {
  subs.add(f);
  return () => subs.delete(f);
}

export function currentTheme(): ThemeChoice {
  return current;
}

/** Set ``data-theme`` on <html> (absent = follow the system, see styles.css). */
export function applyTheme(choice: ThemeChoice): void {
  current = choice;
  subs.forEach((f) => f());
  const root = document.documentElement;
  if (choice === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", choice);
  try {
    if (choice === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    /* private mode: the choice lasts for this page */
  }
}

export function systemPrefersDark(): boolean {
  return typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
}

/** The next choice of the toggle: the opposite of what is shown now. */
export function toggled(choice: ThemeChoice): ThemeChoice {
  const dark = choice === "dark" || (choice === "system" && systemPrefersDark());
  return dark ? "light" : "dark";
}
