"""The team view of a shared flow's messages, vertex builds and transactions reads through an index
(migrations monitor_0005 and monitor_0006).

``GET /monitor/messages?flow_id=`` of another user's flow shared with the caller lists every user's messages
of that flow (``WHERE flow_id = ?``, no ``user_id``): the owner's indexes all start with ``user_id``, so the
list needs ``ix_monitor_message_flow_time``. Checked on the database's own plan as the other list plans are
(tests/core/test_list_query_plans.py: SQLite ``EXPLAIN QUERY PLAN``, PostgreSQL ``EXPLAIN`` with sequential
scans and sorts priced out).
"""

from __future__ import annotations

import datetime as dt
import re
import uuid

import pytest
import sqlalchemy as sa
from service_monitor.models import Message, Transaction, VertexBuild

from core import appstate
from tests.core.test_list_query_plans import _check, _cursor, _plans


@pytest.fixture
def shared_flow(client, admin, alice, bob):
    """Bob's flow in a project shared (read) with a team alice is in."""
    project = client.post("/api/v1/projects/", json={"name": "team"}, headers=bob.bearer).get_json()["id"]
    body = {"name": "team flow", "folder_id": project, "data": {"nodes": [], "edges": []}}
    flow = client.post("/api/v1/flows/", json=body, headers=bob.bearer).get_json()["id"]
    team = client.post("/api/v1/authz/teams", json={"team_name": "t", "adom_name": "t"}, headers=admin.bearer)
    team_id = team.get_json()["id"]
    added = client.post(f"/api/v1/authz/teams/{team_id}/members", json={"user_id": alice.id}, headers=admin.bearer)
    assert added.status_code == 201, added.get_json()
    share = {"resource_type": "project", "resource_id": project, "scope": "team", "target_id": team_id}
    made = client.post("/api/v1/authz/shares", json={**share, "permission_level": "read"}, headers=bob.bearer)
    assert made.status_code == 201, made.get_json()
    return flow


TEAM_LISTS = [
    # (name, query, far page)
    ("first page", "limit=50", False),
    ("far page", "limit=50&offset=500", True),
    ("newest first, far page", "order=DESC&limit=50&offset=500", True),
    ("of a session", "session_id=s-1&limit=50", False),
    ("after a cursor", f"limit=50&cursor={_cursor('a')}", False),
    ("newest first, after a cursor", f"order=DESC&limit=50&cursor={_cursor('d')}", False),
]


@pytest.mark.parametrize(("name", "query", "far"), TEAM_LISTS, ids=[case[0] for case in TEAM_LISTS])
def test_the_team_view_of_a_flows_messages_reads_through_its_index(app, client, alice, shared_flow, name, query, far):
    url = f"/api/v1/monitor/messages?flow_id={shared_flow}&{query}"
    plans = _plans(app, client, url, alice.bearer, "monitor_message")
    dialect = appstate.state(app).engine.dialect.name
    _check(plans, "monitor_message", dialect, far=far)
    for statement, plan in plans:
        assert "user_id" not in statement.split("WHERE", 1)[-1], statement  # every user's rows: the team view
        assert "ix_monitor_message_flow_time" in plan, f"{statement}\n--- plan ---\n{plan}"
    if "cursor" in query:  # one index range from the cursor's timestamp on, as the owner's keyset pages
        ((statement, plan),) = plans
        if dialect == "postgresql":
            assert re.search(r"Index Cond: .*\"timestamp\" [<>]= ", plan), plan
        else:
            assert re.search(r"USING INDEX ix_monitor_message_flow_time \(flow_id=\? AND timestamp[<>]\?\)", plan), plan


def test_with_statistics_each_list_takes_its_own_index(app, client, alice, shared_flow):
    """On analyzed rows the planner takes the owner's index for an owner's list and the team index for the team
    view (on the empty tables of the other plan tests their costs tie: tests/core/test_list_query_plans.py hides
    the team index there). PostgreSQL only: SQLite prefers the index with more equality terms by rule."""
    engine = appstate.state(app).engine
    if engine.dialect.name != "postgresql":
        pytest.skip("the cost-based choice is PostgreSQL's")
    own_flow, users = uuid.uuid4(), [uuid.UUID(alice.id), *(uuid.uuid4() for _ in range(29))]
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    flows = [uuid.UUID(shared_flow), own_flow, *(uuid.uuid4() for _ in range(18))]
    rows = [
        {
            "id": uuid.uuid4(),
            "user_id": users[i % len(users)],
            "flow_id": flows[i % len(flows)] if i % 3 else flows[i % 2],
            "timestamp": start + dt.timedelta(seconds=i),
            "session_id": f"s-{i % 7}",
        }
        for i in range(6000)
    ]
    with engine.begin() as conn:
        conn.execute(sa.insert(Message.__table__), rows)
        conn.exec_driver_sql("ANALYZE monitor_message")
    owner = _plans(
        app, client, f"/api/v1/monitor/messages?flow_id={own_flow}&limit=50", alice.bearer, "monitor_message"
    )
    team = _plans(
        app, client, f"/api/v1/monitor/messages?flow_id={shared_flow}&limit=50", alice.bearer, "monitor_message"
    )
    assert all("ix_monitor_message_owner_flow_time" in plan for _statement, plan in owner), owner
    assert all("ix_monitor_message_flow_time" in plan for _statement, plan in team), team


#: (name, url template, table, team index, far page): a shared flow's builds and transactions of every user
TEAM_ROWS = [
    ("vertex builds", "/api/v1/monitor/builds?flow_id={flow}", "monitor_vertex_build",
     "ix_monitor_vertex_build_flow_time", False),
    ("transactions, first page", "/api/v1/monitor/transactions?flow_id={flow}&page=1&size=50",
     "monitor_transaction", "ix_monitor_transaction_flow_time", False),
    ("transactions, far page", "/api/v1/monitor/transactions?flow_id={flow}&page=11&size=50",
     "monitor_transaction", "ix_monitor_transaction_flow_time", True),
]  # fmt: skip


@pytest.mark.parametrize(("name", "url", "table", "index", "far"), TEAM_ROWS, ids=[case[0] for case in TEAM_ROWS])
def test_the_team_view_of_a_flows_builds_and_transactions_reads_through_its_index(
    app, client, alice, shared_flow, name, url, table, index, far
):
    plans = _plans(app, client, url.format(flow=shared_flow), alice.bearer, table)
    _check(plans, table, appstate.state(app).engine.dialect.name, far=far)
    for statement, plan in plans:
        assert "user_id" not in statement.split("WHERE", 1)[-1], statement  # every user's rows: the team view
        assert index in plan, f"{statement}\n--- plan ---\n{plan}"


def test_with_statistics_builds_and_transactions_take_their_own_index(app, client, alice, shared_flow):
    """As for messages: on analyzed rows the owner's lists of builds and transactions take the owner's index and
    the team's lists the team index (PostgreSQL's cost-based choice)."""
    engine = appstate.state(app).engine
    if engine.dialect.name != "postgresql":
        pytest.skip("the cost-based choice is PostgreSQL's")
    own_flow, users = uuid.uuid4(), [uuid.UUID(alice.id), *(uuid.uuid4() for _ in range(29))]
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    flows = [uuid.UUID(shared_flow), own_flow, *(uuid.uuid4() for _ in range(18))]

    def owner_and_flow(i):
        return users[i % len(users)], flows[i % len(flows)] if i % 3 else flows[i % 2]

    builds, transactions = [], []
    for i in range(6000):
        user, flow = owner_and_flow(i)
        stamp = start + dt.timedelta(seconds=i)
        builds.append(
            {"build_id": uuid.uuid4(), "id": f"v-{i % 9}", "user_id": user, "flow_id": flow, "timestamp": stamp}
        )
        transactions.append(
            {"id": uuid.uuid4(), "user_id": user, "flow_id": flow, "timestamp": stamp, "vertex_id": "v"}
        )
    with engine.begin() as conn:
        conn.execute(sa.insert(VertexBuild.__table__), builds)
        conn.execute(sa.insert(Transaction.__table__), transactions)
        conn.exec_driver_sql("ANALYZE monitor_vertex_build")
        conn.exec_driver_sql("ANALYZE monitor_transaction")
    cases = [
        ("/api/v1/monitor/builds?flow_id={}", "monitor_vertex_build", "ix_monitor_vertex_build_owner_flow",
         "ix_monitor_vertex_build_flow_time"),
        ("/api/v1/monitor/transactions?flow_id={}&page=1&size=50", "monitor_transaction",
         "ix_monitor_transaction_owner_flow_time", "ix_monitor_transaction_flow_time"),
    ]  # fmt: skip
    for url, table, owner_index, team_index in cases:
        owner = _plans(app, client, url.format(own_flow), alice.bearer, table)
        team = _plans(app, client, url.format(shared_flow), alice.bearer, table)
        assert all(owner_index in plan for _statement, plan in owner), owner
        assert all(team_index in plan for _statement, plan in team), team
