"""Alembic environment shared by every plugin branch.

The host passes an open connection and the branch's version table through
``config.attributes`` (see :func:`core.db.upgrade`); migrations never run
with their own engine or read an ini file.
"""

from alembic import context

from core.db import Base

config = context.config
connection = config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=config.attributes["version_table"],
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
