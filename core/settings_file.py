"""``service settings export/diff/apply``: users, teams, roles and policies as one reviewable JSON file.

``export`` writes every plugin's sections (``settings_export``) as sorted, indented JSON: names, flags,
memberships and lists, never a secret. ``diff FILE`` tells what ``apply FILE`` would change (one line
per change, nothing written; exit status 1 when there is a difference, for CI). ``apply FILE`` makes
the deployment match the file in one transaction (``settings_apply``); a section absent from the file
is left alone, so a file may hold only ``teams``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from flask.cli import with_appcontext

from core import appstate, db

FORMAT = 1


def export() -> dict[str, Any]:
    sections: dict[str, Any] = {}
    for answer in appstate.hooks().settings_export():
        for name, value in (answer or {}).items():
            if name in sections:
                raise click.ClickException(f"two plugins export the settings section {name!r}")
            sections[name] = value
    return {"format": FORMAT, **dict(sorted(sections.items()))}


def _read(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise click.ClickException(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise click.ClickException(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise click.ClickException(f'{path} is not a settings file (an object with "format": {FORMAT})')
    known = set(export())
    unknown = sorted(set(data) - known)
    if unknown:
        raise click.ClickException(
            f"unknown sections in {path}: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    return {k: v for k, v in data.items() if k != "format"}


def apply(sections: dict[str, Any], *, dry_run: bool) -> list[str]:
    """Every plugin's change lines; with ``dry_run`` the transaction is rolled back."""
    s = db.session()
    try:
        lines = [line for answer in appstate.hooks().settings_apply(sections=sections, dry_run=dry_run)
                 for line in answer or ()]  # fmt: skip
        if dry_run:
            s.rollback()
        else:
            s.commit()
    except BaseException:
        s.rollback()
        raise
    return sorted(lines)


@click.group("settings", help="Users, teams, roles and policies as one reviewable file (export, diff, apply).")
def settings_group() -> None:
    """``service settings``."""


@settings_group.command("export", help="Write the settings file (JSON, sorted, no secrets) to FILE or stdout.")
@click.option("--output", "-o", default="-", help="The file to write (default: stdout).")
@with_appcontext
def export_command(output: str) -> None:
    text = json.dumps(export(), indent=2, sort_keys=True, default=str) + "\n"
    if output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")


@settings_group.command("diff", help="What `apply FILE` would change (exit status 1 when anything would).")
@click.argument("file")
@with_appcontext
def diff_command(file: str) -> None:
    lines = apply(_read(file), dry_run=True)
    for line in lines:
        click.echo(line)
    if lines:
        sys.exit(1)
    click.echo("no changes")


@settings_group.command("apply", help="Make users, teams, roles and policies match FILE (one transaction).")
@click.argument("file")
@with_appcontext
def apply_command(file: str) -> None:
    lines = apply(_read(file), dry_run=False)
    for line in lines:
        click.echo(line)
    click.echo(f"{len(lines)} change(s) applied" if lines else "no changes")
