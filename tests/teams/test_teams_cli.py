"""``service teams ...``."""

from __future__ import annotations

import json
import uuid

PLUGINS = ["accounts", "flows", "teams"]


def run(app, *args):
    return app.test_cli_runner().invoke(args=list(args))


def test_teams_commands(make_app):
    app = make_app(plugins=PLUGINS)
    created = run(app, "teams", "create", "eng", "--name", "Engineering")
    assert created.exit_code == 0, created.output
    team_id = created.output.strip()
    assert run(app, "teams", "create", "eng").exit_code == 1
    user = str(uuid.uuid4())
    assert run(app, "teams", "add-member", "eng", user).exit_code == 0
    assert run(app, "teams", "add-member", team_id, user).exit_code == 1  # already a member
    assert [json.loads(line) for line in run(app, "teams", "members", "eng").output.splitlines()] == [
        {"user_id": user, "source": "manual"}
    ]
    [listed] = [json.loads(line) for line in run(app, "teams", "list").output.splitlines()]
    assert listed == {"id": team_id, "adom_name": "eng", "team_name": "Engineering", "members": 1}
    assert run(app, "teams", "remove-member", "eng", user).exit_code == 0
    assert run(app, "teams", "members", "eng").output == ""
    assert run(app, "teams", "delete", "eng").exit_code == 0
    assert run(app, "teams", "members", "eng").exit_code == 1
