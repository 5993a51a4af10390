"""``service policies ...``: rebuild the component-usage index."""

from __future__ import annotations

import click


@click.group("policies")
def policies_group() -> None:
    """Catalog and model-provider policies."""


@policies_group.command("reindex")
def reindex() -> None:
    """Rebuild the component-usage index from every stored flow."""
    from core import appstate, db
    from service_policies import hookspecs, usage
    from service_policies.runtime import canonical, runtime

    hooks = appstate.hooks()
    with db.transaction() as s:
        total = usage.rebuild(
            s, lambda after, limit: hooks.first(hookspecs.stored_flows, after_id=after, limit=limit), canonical()
        )
    runtime().counts.clear()
    click.echo(f"Indexed {total} flows")
