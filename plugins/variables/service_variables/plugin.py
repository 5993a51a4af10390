"""Hook implementations of the variables plugin (thin: the logic is in services)."""

from __future__ import annotations

from pathlib import Path

from core import hookimpl
from core.records import Migrations

#: the hooks this plugin publishes: secret-key rotation (plugins with secrets answer ``reencrypt_secrets``)
HOOKSPECS = "service_variables.hookspecs"


@hookimpl
def register_blueprints():
    from service_variables.resources import variables_blp

    return [variables_blp]


@hookimpl
def register_migrations():
    return [Migrations("variables", Path(__file__).parent / "migrations")]


@hookimpl
def register_commands():
    from service_variables.cli import secret_key_group

    return [secret_key_group]


@hookimpl
def get_variable(user_id: str, name: str) -> str | None:
    from core import db
    from service_variables import services

    return services.get_value(db.session(), user_id, name)


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_variables import services

    services.delete_user_rows(db.session(), user_id)


@hookimpl(optionalhook=True)
def resource_ref(kind: str, resource_id: str):
    """The teams plugin's ``resource_ref`` for a variable (shares of ``variable``), any owner's."""
    import uuid

    if kind != "variable":
        return None
    try:
        key = uuid.UUID(str(resource_id))
    except ValueError:
        return None
    from core import db
    from service_variables import services
    from service_variables.models import Variable

    row = db.session().get(Variable, key)
    return None if row is None else services.variable_ref(row)
