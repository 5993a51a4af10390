"""HTTP endpoints of variables (``/api/v1/variables/``), as the reference serves them."""

from __future__ import annotations

from flask_smorest import Blueprint

from core import db
from core.auth import authenticated, current_actor
from core.errors import ValidationFailed
from service_variables import schemas, services

variables_blp = Blueprint("variables", __name__, url_prefix="/api/v1/variables", description="Variables")


@variables_blp.route("/", methods=["POST"])
@variables_blp.arguments(schemas.VariableCreateSchema)
@variables_blp.response(201, schemas.VariableSchema)
@authenticated("user")
def create_variable(body):
    """Create a variable; the value is encrypted and a Credential's value is never returned."""
    with db.transaction() as s:
        return services.variable_out(services.create_variable(s, current_actor().id, body))


@variables_blp.route("/", methods=["GET"])
@variables_blp.response(200, schemas.VariableSchema(many=True))
@authenticated("user")
def list_variables():
    """The caller's variables (Credential values are null)."""
    return [services.variable_out(v) for v in services.list_variables(db.session(), current_actor().id)]


@variables_blp.route("/<variable_id>", methods=["PATCH"])
@variables_blp.arguments(schemas.VariableUpdateSchema)
@variables_blp.response(200, schemas.VariableSchema)
@authenticated("user")
def update_variable(body, variable_id):
    """Rename, change the value or the default fields of one of the caller's variables."""
    if str(body["id"]) != variable_id.lower():
        raise ValidationFailed(
            [{"loc": ["body", "id"], "msg": "id must match the variable id in the path", "type": "value_error"}]
        )
    with db.transaction() as s:
        return services.variable_out(services.update_variable(s, current_actor().id, variable_id, body))


@variables_blp.route("/<variable_id>", methods=["DELETE"])
@variables_blp.response(204)
@authenticated("user")
def delete_variable(variable_id):
    """Delete one of the caller's variables (this does not revoke the key at the third party)."""
    with db.transaction() as s:
        services.delete_variable(s, current_actor().id, variable_id)
    return None
