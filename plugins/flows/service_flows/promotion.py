"""Promotion between environments: ``service flows export --dir DIR`` and ``service flows import --dir DIR``.

Export writes one file per flow, ``<flow id>.json``: sorted keys, two-space indent, a final newline,
secret values blanked, and none of the fields that change without an edit (``updated_at``,
``version_token``, owner and project ids, a node's ``selected``/``dragging`` state); the project is
named (``project``), so a directory diffs cleanly in Git and reviews like code.

Import applies a directory: a flow whose id exists is updated (its owner kept), another is created
with that id for ``--user-id``, in the project of that name (created when missing). A blanked secret
in a file keeps the target's stored value for that node and field, so promotion never wipes the
credentials of the environment it lands in. ``--dry-run`` prints what would change and writes
nothing. Every write goes through the flows plugin's ordinary saves: each is a new version and an
audit entry in the target.
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import click
import sqlalchemy as sa
from flask.cli import with_appcontext
from sqlalchemy.orm import Session

from service_flows import sanitize, services
from service_flows.models import Flow, Folder

#: the members a file keeps, besides ``data`` and ``project``
MEMBERS = (
    "id", "name", "description", "icon", "icon_bg_color", "gradient", "is_component", "webhook", "endpoint_name",
    "tags", "locked", "mcp_enabled", "action_name", "action_description", "access_type", "flow_type", "a2a_enabled",
    "a2a_card_overrides",
)  # fmt: skip
#: per-node editor state that changes without an edit
VOLATILE_NODE_KEYS = ("selected", "dragging", "positionAbsolute", "measured", "resizing")


def _stable_data(data: Any) -> Any:
    data = sanitize.blank_secrets(data)
    if isinstance(data, dict):
        data = copy.deepcopy(data)
        for node in data.get("nodes") or []:
            if isinstance(node, dict):
                for key in VOLATILE_NODE_KEYS:
                    node.pop(key, None)
        for edge in data.get("edges") or []:
            if isinstance(edge, dict):
                edge.pop("selected", None)
    return data


def document(flow: Flow, project: str | None) -> dict[str, Any]:
    """The file form of a stored flow."""
    out: dict[str, Any] = {k: getattr(flow, k) for k in MEMBERS}
    out["id"] = str(flow.id)
    out["tags"] = list(flow.tags or [])
    out["data"] = _stable_data(flow.data)
    out["project"] = project
    return out


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _projects(s: Session) -> dict[uuid.UUID, str]:
    return {row.id: row.name for row in s.execute(sa.select(Folder.id, Folder.name))}


def export_flows(s: Session, directory: Path, user_id: uuid.UUID | None, project: str | None) -> list[Path]:
    """Write one file per flow (``user_id``'s, or every owner's); files of flows no longer there are left alone."""
    directory.mkdir(parents=True, exist_ok=True)
    names = _projects(s)
    query = sa.select(Flow).order_by(Flow.id)
    if user_id is not None:
        query = query.where(Flow.user_id == user_id)
    written = []
    for flow in s.scalars(query):
        folder = names.get(flow.folder_id) if flow.folder_id else None
        if project is not None and folder != project:
            continue
        path = directory / f"{flow.id}.json"
        path.write_text(dumps(document(flow, folder)), encoding="utf-8")
        written.append(path)
    return written


def _keep_target_secrets(incoming: Any, stored: Any) -> Any:
    """``incoming`` with each blank password value replaced by the stored flow's value for that node and field."""
    if not isinstance(incoming, dict) or not isinstance(stored, dict):
        return incoming
    incoming = copy.deepcopy(incoming)
    old: dict[tuple[str, str], Any] = {}
    for node in stored.get("nodes") or []:
        template = ((node.get("data") or {}).get("node") or {}).get("template") if isinstance(node, dict) else None
        for name, field in (template or {}).items():
            if isinstance(field, dict) and field.get("password"):
                old[(str(node.get("id")), name)] = field.get("value")
    for node in incoming.get("nodes") or []:
        template = ((node.get("data") or {}).get("node") or {}).get("template") if isinstance(node, dict) else None
        for name, field in (template or {}).items():
            key = (str(node.get("id")), name)
            if isinstance(field, dict) and field.get("password") and not field.get("value") and old.get(key):
                field["value"] = old[key]
    return incoming


def _read(directory: Path) -> list[dict[str, Any]]:
    docs = []
    for path in sorted(directory.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            uuid.UUID(str(doc.get("id")))
        except (ValueError, AttributeError) as exc:
            raise click.ClickException(f"{path.name}: not a flow file ({exc.__class__.__name__})") from None
        if not isinstance(doc.get("name"), str):
            raise click.ClickException(f"{path.name}: a flow file needs a name")
        docs.append(doc)
    return docs


def _folder_id(s: Session, owner: uuid.UUID, name: str | None, dry_run: bool) -> uuid.UUID | None:
    if not name:
        return None
    found = s.scalar(sa.select(Folder.id).where(Folder.user_id == owner, Folder.name == name))
    if found is not None or dry_run:
        return found
    folder = Folder(user_id=owner, name=name, created_at=services.db.utcnow(), updated_at=services.db.utcnow())
    s.add(folder)
    s.flush()
    return folder.id


def import_flows(s: Session, directory: Path, user_id: uuid.UUID | None, dry_run: bool) -> list[str]:
    """Apply every file of ``directory``; per flow one line: ``create``, ``update`` (what changed), ``unchanged``."""
    lines = []
    names = _projects(s)
    for doc in _read(directory):
        key = uuid.UUID(str(doc["id"]))
        existing = s.get(Flow, key)
        label = f"{doc['name']} ({key})"
        if existing is None:
            if user_id is None:
                raise click.ClickException(f"{label} does not exist here: name its owner with --user-id")
            lines.append(f"create {label}")
            if not dry_run:
                body = {k: doc.get(k) for k in MEMBERS if k != "id"}
                body["data"] = doc.get("data")
                body["folder_id"] = _folder_id(s, user_id, doc.get("project"), dry_run)
                services.create_flow(s, user_id, body, flow_id=key, foreign_folder="default")
            continue
        current = document(existing, names.get(existing.folder_id) if existing.folder_id else None)
        changed = sorted(k for k in (*MEMBERS, "data", "project") if current.get(k) != doc.get(k))
        if not changed:
            lines.append(f"unchanged {label}")
            continue
        lines.append(f"update {label}: {', '.join(changed)}")
        if dry_run:
            continue
        body = {k: doc.get(k) for k in MEMBERS if k != "id"}
        body["data"] = _keep_target_secrets(doc.get("data"), existing.data)
        if "project" in changed:
            body["folder_id"] = _folder_id(s, existing.user_id, doc.get("project"), dry_run)
        members = ("name", "folder_id", *services.CREATE_MEMBERS)
        services.apply_changes(s, existing, body, members, on_clash="rename", foreign_folder="default", autosave=False)
    return lines


@click.group("flows")
def flows_group() -> None:
    """Flows: export to and import from a directory (promotion between environments)."""


@flows_group.command("export")
@click.option("--dir", "directory", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--user-id", default=None, help="Only this owner's flows (default: every owner's).")
@click.option("--project", default=None, help="Only the flows of the project with this name.")
@with_appcontext
def export_command(directory: Path, user_id: str | None, project: str | None) -> None:
    """Write one stable, diff-friendly JSON file per flow into DIR (no secrets, no volatile fields)."""
    from core import db

    owner = _owner(user_id)
    paths = export_flows(db.session(), directory, owner, project)
    click.echo(f"Exported {len(paths)} flows to {directory}")


@flows_group.command("import")
@click.option("--dir", "directory", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--user-id", default=None, help="Owner of the flows the files create.")
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
@with_appcontext
def import_command(directory: Path, user_id: str | None, dry_run: bool) -> None:
    """Create or update (by id) every flow of DIR."""
    from core import db

    owner = _owner(user_id)
    s = db.session()
    try:
        lines = import_flows(s, directory, owner, dry_run)
    except BaseException:
        s.rollback()
        raise
    if dry_run:
        s.rollback()
    else:
        s.commit()
    for line in lines:
        click.echo(("would " if dry_run and not line.startswith("unchanged") else "") + line)
    counts = {verb: sum(1 for line in lines if line.startswith(verb)) for verb in ("create", "update", "unchanged")}
    click.echo(", ".join(f"{n} {verb}" for verb, n in counts.items()) + (" (dry run)" if dry_run else ""))


def _owner(user_id: str | None) -> uuid.UUID | None:
    if user_id is None:
        return None
    try:
        return uuid.UUID(user_id)
    except ValueError:
        raise click.BadParameter("expected a user id (UUID)", param_hint="--user-id") from None
