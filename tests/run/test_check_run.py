"""The ``check_run`` veto: a plugin refuses a flow before anything of it runs, on every run surface."""

from __future__ import annotations

import pytest

from core import hookimpl
from core.app import state
from core.contracts import FlowRecord
from core.errors import ApiError
from tests.build.buildkit import parse
from tests.run.conftest import PLUGINS
from tests.run.runkit import chat_echo, create_flow, wait_jobs


class Veto:
    """Refuses flows whose name starts with ``blocked``; records every question."""

    def __init__(self) -> None:
        self.asked: list[tuple[str | None, str, str]] = []

    @hookimpl
    def check_run(self, user_id: str | None, flow: FlowRecord, surface: str) -> None:
        self.asked.append((user_id, str(flow.name), surface))
        assert isinstance(flow.data, dict)
        if str(flow.name).startswith("blocked"):
            raise ApiError(403, "Component ChatOutput is blocked by the catalog policy")


@pytest.fixture
def veto() -> Veto:
    return Veto()


@pytest.fixture
def app(make_app, recorder, veto):
    return make_app(plugins=[*PLUGINS, "build", ("recorder", recorder), ("veto", veto)])


def test_refused_on_simplified_advanced_and_webhook_runs(app, client, alice, recorder, veto):
    ok = create_flow(client, alice, chat_echo(), name="fine")
    bad = create_flow(client, alice, chat_echo(), name="blocked flow")
    assert client.post(f"/api/v1/run/{ok['id']}", json={"input_value": "hi"}, headers=alice.key).status_code == 200
    refused = client.post(f"/api/v1/run/{bad['id']}", json={"input_value": "hi"}, headers=alice.key)
    assert refused.status_code == 403
    assert refused.get_json() == {"detail": "Component ChatOutput is blocked by the catalog policy"}
    advanced = client.post(f"/api/v1/run/advanced/{bad['id']}", json={}, headers=alice.key)
    assert advanced.status_code == 403
    # refused in the request, before any job starts
    webhook = client.post(f"/api/v1/webhook/{bad['id']}", data="x", headers=alice.key)
    assert webhook.status_code == 403 and "blocked by the catalog policy" in webhook.get_json()["detail"]
    assert state(app).jobs.active_jobs() == 0
    wait_jobs(app)
    # nothing of the refused flow ran: only the allowed run stored its two messages
    assert [m["flow_id"] for m in recorder.messages] == [ok["id"], ok["id"]]
    surfaces = [s for _, name, s in veto.asked if name == "blocked flow"]
    assert surfaces == ["run", "run_advanced", "webhook"]
    assert all(user == alice.id for user, _, _ in veto.asked)


def test_refused_build_is_a_403_before_any_job(app, client, alice, veto):
    bad = create_flow(client, alice, chat_echo(), name="blocked flow")
    for delivery in ("direct", "polling", "streaming"):
        response = client.post(
            f"/api/v1/build/{bad['id']}/flow?event_delivery={delivery}",
            json={"inputs": {"input_value": "hi"}},
            headers=alice.bearer,
        )
        assert response.status_code == 403
        assert response.get_json() == {"detail": "Component ChatOutput is blocked by the catalog policy"}
    assert veto.asked[-1] == (alice.id, "blocked flow", "build")
    assert state(app).jobs.active_jobs() == 0
    # an unsaved graph sent by the editor is what is checked, and what runs
    ok = create_flow(client, alice, chat_echo(), name="fine")
    started = client.post(
        f"/api/v1/build/{ok['id']}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hi"}, "data": chat_echo()},
        headers=alice.bearer,
    )
    assert [e["event"] for e in parse(started.get_data(as_text=True))][-1] == "end"
    # the job records its own end just after its last event reaches the stream
    wait_jobs(app)
    assert state(app).jobs.active_jobs() == 0


def test_resolve_with_a_flow_the_surface_found_still_asks_check_run(app, client, alice, veto):
    """``resolve(found=...)``: no second read for the owner's own flow; anything else is looked up as usual."""
    from core import runs
    from tests.conftest import make_user, superuser

    ok = create_flow(client, alice, chat_echo(), name="fine")
    bad = create_flow(client, alice, chat_echo(), name="blocked found")
    bob = make_user(client, superuser(client), username="bob")
    with app.test_request_context():
        hook = state(app).host.hooks
        found = hook.find_flow(user_id=None, flow_id_or_name=ok["id"], public=False)
        assert found is not None
        edited = found.replace(name="edited in the surface's copy")
        prepared = runs.prepare(runs.RunRequest(flow=ok["id"], user_id=alice.id, surface="a2a"), found=edited)
        assert prepared.flow.name == "edited in the surface's copy"  # the copy given, not a second read
        assert veto.asked[-1] == (alice.id, "edited in the surface's copy", "a2a")
        refused = hook.find_flow(user_id=None, flow_id_or_name=bad["id"], public=False)
        with pytest.raises(ApiError) as info:  # check_run still vetoes a flow handed in
            runs.resolve(runs.RunRequest(flow=bad["id"], user_id=alice.id, surface="a2a"), found=refused)
        assert info.value.status == 403
        # another user's request, or another flow id: the found flow is ignored and the owner lookup decides
        with pytest.raises(runs.FlowNotFound):
            runs.resolve(runs.RunRequest(flow=ok["id"], user_id=bob.id, surface="a2a"), found=found)
        with pytest.raises(ApiError):  # the found copy (another flow) ignored: the lookup finds the blocked one
            runs.resolve(runs.RunRequest(flow=bad["id"], user_id=alice.id, surface="x"), found=edited)
        assert veto.asked[-1] == (alice.id, "blocked found", "x")
