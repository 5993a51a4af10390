"""``service schedules ...`` and ``service executions ...``."""

from __future__ import annotations

import json

from tests.run.runkit import chat_echo, create_flow
from tests.triggers.test_executions import settle


def test_schedules_and_executions_on_the_command_line(app, client, alice):
    flow = create_flow(client, alice, chat_echo())
    runner = app.test_cli_runner()
    made = runner.invoke(
        args=["schedules", "create", "--user", alice.id, "--flow", flow["id"], "--every", "60", "--input", "cli"]
    )
    assert made.exit_code == 0, made.output
    created = json.loads(made.output)
    assert len(created["next_fire_times"]) == 5
    paused = runner.invoke(args=["schedules", "pause", "--user", alice.id, created["id"]])
    assert paused.exit_code == 0 and json.loads(paused.output)["enabled"] is False
    listed = json.loads(runner.invoke(args=["schedules", "list", "--user", alice.id]).output)
    assert [s["id"] for s in listed] == [created["id"]]
    bad = runner.invoke(args=["schedules", "create", "--user", alice.id, "--flow", flow["id"], "--cron", "nope"])
    assert bad.exit_code != 0 and "Invalid cron expression" in bad.output
    assert runner.invoke(args=["schedules", "list", "--user", "alice"]).exit_code != 0
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key).status_code == 200
    [run] = json.loads(runner.invoke(args=["executions", "list", "--user", alice.id]).output)
    retried = runner.invoke(args=["executions", "retry", "--user", alice.id, run["id"]])
    assert retried.exit_code == 0 and json.loads(retried.output)["retry_of"] == run["id"]
    settle(app)
    assert runner.invoke(args=["schedules", "delete", "--user", alice.id, created["id"]]).output.strip() == "deleted"
