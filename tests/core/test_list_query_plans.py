"""Every paginated list reads through an index: the database's own query plan, asserted per endpoint.

Each list endpoint is called once; every SELECT it sends to its table is explained (SQLite ``EXPLAIN
QUERY PLAN``; PostgreSQL ``EXPLAIN`` with sequential scans and sorts priced out, so the plan shows whether
an index *can* serve the query, whatever the few test rows would make cheapest). A list must search its
table by an index (never ``SCAN`` the table), read in the index's order (never sort the owner's rows: only
a fetched page may be sorted, after the deferred join), and a far page must find its keys from an index
alone (covering / index-only), so that at 1,000,000 rows it does not read the rows it skips.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from typing import Any

import pytest
import sqlalchemy as sa

from core import appstate

MSG_FLOW = str(uuid.uuid4())


def _cursor(direction: str) -> str:
    """A cursor as the messages list hands out in ``X-Next-Cursor`` (opaque to clients; its format is the
    monitor's own)."""
    raw = json.dumps(["timestamp", direction, "2026-01-01T00:00:00+00:00", uuid.uuid4().hex], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


#: on PostgreSQL, the indexes hidden while an owner's list is explained: on these empty tables the planner's
#: costs tie, and it may take the narrower team index (``flow_id`` first, migrations monitor_0005 and monitor_0006)
#: for an owner's query as well; with statistics it takes the owner's (tests/teams/test_team_query_plans.py checks
#: both choices on analyzed rows). Dropped in the EXPLAIN's own transaction, which is rolled back.
TEAM_INDEXES = {
    "monitor_message": ("ix_monitor_message_flow_time",),
    "monitor_vertex_build": ("ix_monitor_vertex_build_flow_time",),
    "monitor_transaction": ("ix_monitor_transaction_flow_time",),
    "observability_trace": ("ix_observability_trace_flow_time",),
}


def _plans(
    app, client, url: str, headers: dict[str, str], table: str, *, hide: tuple[str, ...] = ()
) -> list[tuple[str, str]]:
    """(statement, plan) of every SELECT on ``table`` that the request sent; ``hide``: indexes (PostgreSQL)
    left out of the plans, to ask whether the others can serve the query."""
    engine = appstate.state(app).engine
    sent: list[tuple[str, Any]] = []

    def capture(conn, cursor, statement, params, context, executemany):
        if statement.lstrip().upper().startswith("SELECT") and re.search(rf"\b{table}\b", statement):
            sent.append((statement, params))

    sa.event.listen(engine, "before_cursor_execute", capture)
    try:
        response = client.get(url, headers=headers)
    finally:
        sa.event.remove(engine, "before_cursor_execute", capture)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert sent, f"{url} sent no SELECT on {table}"
    out = []
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql("SET enable_seqscan = off")
            conn.exec_driver_sql("SET enable_sort = off")
            for index in hide:
                conn.exec_driver_sql(f"DROP INDEX IF EXISTS {index}")
            for statement, params in sent:
                rows = conn.exec_driver_sql("EXPLAIN " + statement, params).all()
                out.append((statement, "\n".join(r[0] for r in rows)))
            conn.rollback()
        else:
            for statement, params in sent:
                rows = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, params).all()
                out.append((statement, "\n".join(r[-1] for r in rows)))
    return out


def _check(plans: list[tuple[str, str]], table: str, dialect: str, *, far: bool = False) -> None:
    for statement, plan in plans:
        where = f"\n{statement}\n--- plan ---\n{plan}"
        deferred = " JOIN (SELECT" in statement  # the page's keys first, then its rows
        if dialect == "postgresql":
            assert not re.search(rf"Seq Scan on {table}\b", plan), where
            sorts = [line for line in plan.splitlines() if "Sort" in line and "Key" not in line]
            # only the deferred join's page (its LIMIT already applied) may be sorted
            assert not sorts or (deferred and plan.count("Sort") <= 2 and "Limit" in plan), where
            if far and deferred:
                assert "Index Only Scan" in plan, where
        else:
            assert not re.search(rf"^SCAN {table}\b", plan, re.M), where
            if not deferred:
                assert "TEMP B-TREE FOR ORDER BY" not in plan, where
            elif far:
                assert re.search(rf"SEARCH {table} USING COVERING INDEX", plan), where
            assert "RIGHT PART OF ORDER BY" not in plan, where


@pytest.fixture
def seeded(client, alice):
    """A project with a few flows; the monitor's lists work on empty tables as well (the plans do not need rows)."""
    folder = client.post("/api/v1/projects/", json={"name": "plans"}, headers=alice.bearer).get_json()["id"]
    flows = []
    for i in range(3):
        body = {"name": f"f{i}", "folder_id": folder, "data": {"nodes": [], "edges": []}}
        made = client.post("/api/v1/flows/", json=body, headers=alice.bearer)
        assert made.status_code == 201
        flows.append(made.get_json()["id"])
    return {"folder": folder, "flow": flows[0]}


LISTS = [
    # (name, url, table, far page)
    ("flows, first page", "/api/v1/flows/?get_all=false&folder_id={folder}&page=1&size=2", "flows_flow", False),
    ("flows, far page", "/api/v1/flows/?get_all=false&folder_id={folder}&page=2&size=2", "flows_flow", True),
    (
        "flow headers, far page",
        "/api/v1/flows/?get_all=false&header_flows=true&folder_id={folder}&page=2&size=2",
        "flows_flow",
        True,
    ),
    ("project page", "/api/v1/projects/{folder}?page=2&size=2", "flows_flow", True),
    ("projects", "/api/v1/projects/", "flows_folder", False),
    ("messages", f"/api/v1/monitor/messages?flow_id={MSG_FLOW}&limit=50", "monitor_message", False),
    ("messages, far page", f"/api/v1/monitor/messages?flow_id={MSG_FLOW}&limit=50&offset=500", "monitor_message", True),
    (
        "messages, newest first, far page",
        f"/api/v1/monitor/messages?flow_id={MSG_FLOW}&order=DESC&limit=50&offset=500",
        "monitor_message",
        True,
    ),
    (
        "messages of a session",
        f"/api/v1/monitor/messages?flow_id={MSG_FLOW}&session_id=s-1&limit=50",
        "monitor_message",
        False,
    ),
    (
        "messages, after a cursor",
        f"/api/v1/monitor/messages?flow_id={MSG_FLOW}&limit=50&cursor={_cursor('a')}",
        "monitor_message",
        False,
    ),
    (
        "messages, newest first, after a cursor",
        f"/api/v1/monitor/messages?flow_id={MSG_FLOW}&order=DESC&limit=50&cursor={_cursor('d')}",
        "monitor_message",
        False,
    ),
    (
        "transactions, far page",
        f"/api/v1/monitor/transactions?flow_id={MSG_FLOW}&page=3&size=50",
        "monitor_transaction",
        True,
    ),
    ("vertex builds", f"/api/v1/monitor/builds?flow_id={MSG_FLOW}", "monitor_vertex_build", False),
    ("files", "/api/v2/files", "files_file", False),
    ("executions", "/api/v1/executions?limit=50", "triggers_execution", False),
    ("executions of a flow", "/api/v1/executions?flow_id={flow}&limit=50", "triggers_execution", False),
    ("executions, far page", "/api/v1/executions?limit=50&offset=500", "triggers_execution", True),
    ("traces", "/api/v1/monitor/traces?page=1&size=50", "observability_trace", False),
    ("traces of a flow", "/api/v1/monitor/traces?flow_id={flow}&page=1&size=50", "observability_trace", False),
]


@pytest.mark.parametrize(("name", "url", "table", "far"), LISTS, ids=[case[0] for case in LISTS])
def test_a_list_reads_through_an_index(app, client, alice, seeded, name, url, table, far):
    plans = _plans(app, client, url.format(**seeded), alice.bearer, table, hide=TEAM_INDEXES.get(table, ()))
    _check(plans, table, appstate.state(app).engine.dialect.name, far=far)


@pytest.mark.parametrize(("order", "direction"), [("ASC", "a"), ("DESC", "d")])
def test_a_cursor_page_starts_at_the_cursor_in_the_index(app, client, alice, order, direction):
    """Keyset pagination: the page after a cursor is one index range that starts at the cursor's timestamp
    (no offset walked, no sort), so page 20,000 of 1,000,000 messages costs what page one does."""
    url = f"/api/v1/monitor/messages?flow_id={MSG_FLOW}&order={order}&limit=50&cursor={_cursor(direction)}"
    plans = _plans(app, client, url, alice.bearer, "monitor_message", hide=TEAM_INDEXES["monitor_message"])
    dialect = appstate.state(app).engine.dialect.name
    _check(plans, "monitor_message", dialect)
    assert len(plans) == 1, plans  # one statement: no count, no deferred join
    statement, plan = plans[0]
    assert " JOIN (SELECT" not in statement, statement
    if dialect == "postgresql":
        assert re.search(r"Index (Only )?Scan( Backward)? using ix_monitor_message_owner_flow_time", plan), plan
        assert re.search(r"Index Cond: .*\"timestamp\" [<>]= ", plan), plan
    else:
        sign = ">" if order == "ASC" else "<"
        assert re.search(
            rf"SEARCH monitor_message USING INDEX ix_monitor_message_owner_flow_time "
            rf"\(user_id=\? AND flow_id=\? AND timestamp{sign}\?\)",
            plan,
        ), plan
