"""``GET /api/v1/hello``: greet the caller; the count is kept per user."""

from __future__ import annotations

import sqlalchemy as sa
from flask_smorest import Blueprint
from marshmallow import Schema, fields

from core import db
from core.auth import authenticated, current_actor
from service_hello.models import Greeting

hello_blp = Blueprint("hello", __name__, url_prefix="/api/v1/hello", description="Example plugin")


class GreetingSchema(Schema):
    message = fields.String(required=True)
    count = fields.Integer(required=True)


@hello_blp.route("/", methods=["GET"])
@hello_blp.response(200, GreetingSchema)
@authenticated("user")
def hello():
    """Greet the caller and say how many times it was greeted."""
    actor = current_actor()
    with db.transaction() as s:
        row = s.scalar(sa.select(Greeting).where(Greeting.user_id == actor.id))
        if row is None:
            row = Greeting(user_id=actor.id, count=0)
            s.add(row)
        row.count += 1
        return {"message": f"Hello, {actor.username or 'friend'}!", "count": row.count}
