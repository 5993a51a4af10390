"""HTTP endpoints of variables (``/api/v1/variables/``), as the reference serves them."""

from __future__ import annotations

from flask_smorest import Blueprint

from core import db
from core.auth import authenticated, current_actor, shared_role
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
    """The caller's variables (Credential values are null), then other users' variables shared with them
    (``is_owner`` false, ``shared_role``; a Credential's value is null for them too: their runs use it)."""
    actor, s = current_actor(), db.session()
    own = [services.variable_out(v) for v in services.list_variables(s, actor.id)]
    return own + [services.shared_out(actor, v, role) for v, role in services.shared_variables(s, actor)]


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
    actor = current_actor()
    with db.transaction() as s:
        owner = services.reach(s, actor, variable_id, "write").user_id  # 404 / 403 for a shared one
        variable = services.update_variable(s, owner, variable_id, body)
        if owner == actor.id:
            return services.variable_out(variable)
        role = shared_role(actor, services.variable_ref(variable)) or "developer"
        return services.shared_out(actor, variable, role)


@variables_blp.route("/<variable_id>", methods=["DELETE"])
@variables_blp.response(204)
@authenticated("user")
def delete_variable(variable_id):
    """Delete one of the caller's variables (this does not revoke the key at the third party)."""
    with db.transaction() as s:
        owner = services.reach(s, current_actor(), variable_id, "delete").user_id  # 404 / 403 for a shared one
        services.delete_variable(s, owner, variable_id)
    return None
