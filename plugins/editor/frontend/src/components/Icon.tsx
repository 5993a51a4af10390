// A few stroke icons (no icon font, no emoji: they render the same everywhere).
const PATHS: Record<string, string> = {
  trash: "M3 6h18M8 6V4h8v2M6 6l1 14h10l1-14M10 11v6M14 11v6",
  pencil: "M4 20h4L19 9l-4-4L4 16v4zM14 6l4 4",
  globe: "M12 3a9 9 0 100 18 9 9 0 000-18zM3 12h18M12 3c3 3 3 15 0 18M12 3c-3 3-3 15 0 18",
  expand: "M14 4h6v6M10 20H4v-6M20 4l-7 7M4 20l7-7",
  play: "M7 5l12 7-12 7V5z",
  plus: "M12 5v14M5 12h14",
  close: "M6 6l12 12M18 6L6 18",
  clock: "M12 3a9 9 0 100 18 9 9 0 000-18zM12 7v5l3 2",
  // component categories
  chat: "M4 5h16v11H9l-5 4V5z",
  database: "M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zM4 6v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3",
  sliders: "M4 6h9M17 6h3M4 12h3M11 12h9M4 18h11M19 18h1M15 4v4M9 10v4M17 16v4",
  branch: "M6 3v18M6 9c0 4 12 2 12 8M18 17v4",
  chip: "M7 7h10v10H7zM10 10h4v4h-4zM9 3v4M15 3v4M9 17v4M15 17v4M3 9h4M3 15h4M17 9h4M17 15h4",
  wrench: "M15 4a5 5 0 00-4.6 6.9L4 17.3 6.7 20l6.4-6.4A5 5 0 0020 9l-3 1-3-3 1-3z",
  box: "M4 7l8-4 8 4v10l-8 4-8-4V7zM4 7l8 4 8-4M12 11v10",
  sun: "M12 8a4 4 0 100 8 4 4 0 000-8zM12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4",
  moon: "M20 14.5A8 8 0 019.5 4 8 8 0 1020 14.5z",
  keyboard: "M3 6h18v12H3zM7 10h0M11 10h0M15 10h0M7 14h10",
  file: "M6 3h8l4 4v14H6zM14 3v4h4M9 12h6M9 16h6",
  hammer: "M14 6l4 4M4 20l9-9M11 4l3-1 7 7-2 2-3-1-2 2-4-4 2-2-1-3z",
  bot: "M5 9h14v10H5zM12 5v4M9 14h0M15 14h0M2 13v3M22 13v3M12 3a1 1 0 100 2",
  vector: "M4 20L20 4M20 4h-6M20 4v6M4 20l5-12M4 20l12-5",
  thumbsUp: "M7 10v11H3V10h4zM7 10l4-7a2 2 0 013 2l-1 5h6a2 2 0 012 2.3l-1.4 7a2 2 0 01-2 1.7H7",
  thumbsDown: "M17 14V3h4v11h-4zM17 14l-4 7a2 2 0 01-3-2l1-5H5a2 2 0 01-2-2.3l1.4-7A2 2 0 016.4 3H17",
  paperclip: "M21 11l-8.5 8.5a5 5 0 01-7-7L14 4a3.5 3.5 0 015 5l-8.5 8.5a2 2 0 01-3-3L15 7",
};

export function Icon({ name, size = 14 }: { name: keyof typeof PATHS | string; size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      <path d={PATHS[name] ?? ""} />
    </svg>
  );
}
