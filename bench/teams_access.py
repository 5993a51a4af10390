"""``python -m bench.teams_access``: what the permission check (``core.auth.can``) costs a member's request
with the teams plugin (issue 33's target: under 50 µs per request).

A project owned by one user is shared with a team at ``write``; a member asks ``can(member, "execute",
flow in that project)`` as a run surface does. Figures, in µs per check (best of ``--repeat`` rounds):

* ``cold``: the first check after a change (the generation row, then the three indexed queries);
* ``request``: a new request's first check (the generation row read once, then this process's cache);
* ``cached``: a later check in the same request (the request's own cache);
* ``owner``: the owner's check (no grant asked for).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from typing import Any

import sqlalchemy as sa


def _app() -> Any:
    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    from core.app import create_app

    return create_app(config={"config_dir": tempfile.mkdtemp(prefix="service-teams-"), "log_level": "warning"})


def _per_check(fn: Any, n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    app = _app()
    from service_teams import access
    from service_teams.models import Share, Team, TeamMember

    from core import db
    from core.auth import Actor, can
    from core.contracts import ResourceRef

    owner, member, project = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with app.app_context(), db.transaction() as s:
        team = Team(team_name="bench", adom_name=f"bench-{uuid.uuid4().hex[:8]}")
        s.add(team)
        s.flush()
        s.add(TeamMember(team_id=team.id, user_id=member))
        s.add(Share(resource_type="project", resource_id=project, scope="team", target_id=team.id,
                    permission_level="write"))  # fmt: skip
    flow = ResourceRef("flow", str(uuid.uuid4()), str(owner), str(project))
    as_member, as_owner = Actor(id=member), Actor(id=owner)

    from flask import g

    def new_request() -> None:  # what a new request starts with: no answers of its own, the generation unread
        g.pop("_service_access", None)
        g.pop("_teams_generation", None)

    def cold() -> None:
        new_request()
        access._cache().answers.clear()
        assert can(as_member, "execute", flow)

    def request() -> None:
        new_request()
        assert can(as_member, "execute", flow)

    figures = {}
    with app.test_request_context("/"):
        db.session().execute(sa.text("SELECT 1"))  # the request's session is open, as on every surface
        figures["cold"] = _per_check(cold, args.n, args.repeat)
        figures["request"] = _per_check(request, args.n * 4, args.repeat)
        figures["cached"] = _per_check(lambda: can(as_member, "execute", flow), args.n * 10, args.repeat)
        figures["owner"] = _per_check(lambda: can(as_owner, "execute", flow), args.n * 10, args.repeat)
    for name, value in figures.items():
        print(f"{name:8s} {value:8.1f} µs per check")


if __name__ == "__main__":
    main()
