// Loads that overlap: only the newest one may apply its answer. A list loaded on mount and loaded again
// after an import can answer in either order (two server workers, one slower); without this the older
// answer could land last and hide what was just imported.

/** Each call starts a load and returns a check: true while no later load has started. */
export function latestOnly(): () => () => boolean {
  let newest = 0;
  return () => {
    const mine = ++newest;
    return () => mine === newest;
  };
}
