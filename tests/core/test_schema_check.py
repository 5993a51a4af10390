"""The cheap schema check: a current database skips the migration work, any other goes through Alembic."""

from __future__ import annotations

import sqlalchemy as sa

from core import appstate, db
from core.plugin_state import migration_records


def _records(app):
    return migration_records(appstate.host(app))


def test_script_heads_read_without_alembic_match_alembics_own(make_app):
    from alembic.script import ScriptDirectory

    app = make_app(plugins=["accounts", "flows", "monitor"])
    for record in _records(app):
        scripts = ScriptDirectory(str(db.MIGRATIONS_DIR), version_locations=[str(record.path)])
        assert db.script_heads(record.path) == frozenset(scripts.get_heads()), record.branch


def test_a_migrated_database_is_current_and_an_upgrade_is_a_no_op(make_app):
    app = make_app(plugins=["accounts", "flows", "monitor"])
    engine, records = appstate.state(app).engine, _records(app)
    assert db.schema_current(engine, records)
    assert db.upgrade(engine, appstate.settings(app), records) == [r.branch for r in records]


def test_a_branch_behind_its_scripts_is_not_current_and_is_upgraded(make_app):
    app = make_app(plugins=["accounts", "flows", "monitor"])
    engine, records = appstate.state(app).engine, _records(app)
    flows = next(r for r in records if r.branch == "flows")
    assert db.script_heads(flows.path) == {"flows_0005"}
    with engine.begin() as conn:  # as if flows_0005 (two columns) had not been applied yet
        conn.execute(sa.text("UPDATE alembic_version_flows SET version_num = 'flows_0004'"))
        conn.execute(sa.text("ALTER TABLE flows_flow DROP COLUMN last_modified_by"))
        conn.execute(sa.text("ALTER TABLE flows_flow DROP COLUMN version_token"))
    assert not db.schema_current(engine, records)
    db.upgrade(engine, appstate.settings(app), records)
    assert db.schema_current(engine, records)
    assert {"version_token", "last_modified_by"} <= {c["name"] for c in sa.inspect(engine).get_columns("flows_flow")}


def test_a_missing_version_table_is_not_current(make_app):
    app = make_app(plugins=["accounts", "flows"])
    engine, records = appstate.state(app).engine, _records(app)
    more = [*records, type(records[0])(branch="nobranch", path=records[0].path)]
    assert not db.schema_current(engine, more)
