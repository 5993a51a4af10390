"""Hook implementations (thin): a blueprint and a migration branch."""

from __future__ import annotations

from pathlib import Path

from core import hookimpl
from core.records import Migrations


@hookimpl
def register_blueprints():
    from service_hello.resources import hello_blp

    return [hello_blp]


@hookimpl
def register_migrations():
    import service_hello.models  # noqa: F401 - the model joins the metadata

    return [Migrations("hello", Path(__file__).parent / "migrations")]
