"""Code-execution components, contained by core.sandbox."""
