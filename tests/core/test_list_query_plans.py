"""Every paginated list reads through an index: the database's own query plan, asserted per endpoint.

Each list endpoint is called once; every SELECT it sends to its table is explained (SQLite ``EXPLAIN
QUERY PLAN``; PostgreSQL ``EXPLAIN`` with sequential scans and sorts priced out, so the plan shows whether
an index *can* serve the query, whatever the few test rows would make cheapest). A list must search its
table by an index (never ``SCAN`` the table), read in the index's order (never sort the owner's rows: only
a fetched page may be sorted, after the deferred join), and a far page must find its keys from an index
alone (covering / index-only), so that at 1,000,000 rows it does not read the rows it skips.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
import sqlalchemy as sa

from core import appstate

MSG_FLOW = str(uuid.uuid4())


def _plans(app, client, url: str, headers: dict[str, str], table: str) -> list[tuple[str, str]]:
    """(statement, plan) of every SELECT on ``table`` that the request sent."""
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
    for i in range(3):
        body = {"name": f"f{i}", "folder_id": folder, "data": {"nodes": [], "edges": []}}
        assert client.post("/api/v1/flows/", json=body, headers=alice.bearer).status_code == 201
    return folder


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
        "transactions, far page",
        f"/api/v1/monitor/transactions?flow_id={MSG_FLOW}&page=3&size=50",
        "monitor_transaction",
        True,
    ),
    ("vertex builds", f"/api/v1/monitor/builds?flow_id={MSG_FLOW}", "monitor_vertex_build", False),
    ("files", "/api/v2/files", "files_file", False),
]


@pytest.mark.parametrize(("name", "url", "table", "far"), LISTS, ids=[case[0] for case in LISTS])
def test_a_list_reads_through_an_index(app, client, alice, seeded, name, url, table, far):
    plans = _plans(app, client, url.format(folder=seeded), alice.bearer, table)
    _check(plans, table, appstate.state(app).engine.dialect.name, far=far)
