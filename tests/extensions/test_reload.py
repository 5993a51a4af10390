"""Bundle reload at run time: new, changed, removed and broken bundles, 409, events, runs in flight."""

from __future__ import annotations

import threading
import time

import pytest

from core.app import state
from core.reload import COMPONENTS_GEN, RELOAD_LOCK, generation
from tests.conftest import make_user
from tests.extensions.extkit import component, flow_of, remove_bundle, write_bundle
from tests.run.runkit import answer, create_flow

DIST = "svc-ext-alpha"


def reload(client, caller, bundle="alpha", extension=DIST):
    return client.post(f"/api/v1/extensions/{extension}/bundles/{bundle}/reload", headers=caller.bearer)


def events(client, caller, since=0.0):
    response = client.get(f"/api/v1/extensions/events?since={since}", headers=caller.bearer)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def catalog_keys(client, caller, category="exttest"):
    return set(client.get("/api/v1/all", headers=caller.bearer).get_json().get(category, {}))


def run_text(client, caller, flow_id, value="hi"):
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": value}, headers=caller.key)
    assert response.status_code == 200, response.get_json()
    return answer(response.get_json())


def test_reload_is_404_with_the_typed_error_unless_enabled(make_app, site):
    app = make_app(plugins=["accounts", "extensions", "standard"])
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtEcho")])
    response = reload(client, admin)
    assert response.status_code == 404
    detail = response.get_json()["detail"]
    assert detail["code"] == "extension-reload-disabled"
    assert {"code", "message", "location", "content", "hint", "ref_url"} <= set(detail)
    assert "ExtEcho" not in state(app).components.current


def test_only_a_superuser_reloads(client, admin, site):
    alice = make_user(client, admin, username="alice")
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtEcho")])
    assert reload(client, alice).status_code == 403
    assert client.post(f"/api/v1/extensions/{DIST}/bundles/alpha/reload").status_code == 403


def test_a_bundle_installed_while_serving_appears_after_reload(app, client, admin, site):
    assert catalog_keys(client, admin) == set()
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtEcho")])
    response = reload(client, admin)
    assert response.status_code == 200, response.get_json()
    result = response.get_json()
    assert result["ok"] is True and result["bundle"] == "alpha" and result["reload_id"]
    assert result["components_added"] == ["ExtEcho"]
    assert result["components_removed"] == [] and result["components_changed"] == []
    assert result["errors"] == [] and result["distribution"] == DIST
    assert catalog_keys(client, admin) == {"ExtEcho"}
    assert generation(state(app).shared, COMPONENTS_GEN) == result["generation"] >= 1
    assert events(client, admin)["generation"] == result["generation"]  # what editors poll to refresh palettes
    flow = create_flow(client, admin, flow_of("ExtEcho", state(app).components.current))
    assert run_text(client, admin, flow["id"]).startswith("hi|v1|")


def test_added_removed_changed_and_the_flows_they_touch(app, client, admin, site):
    alice = make_user(client, admin, username="alice")
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtA"), component("ExtB"), component("ExtKeep")])
    assert reload(client, admin).status_code == 200
    registry = state(app).components.current
    uses_a = create_flow(client, alice, flow_of("ExtA", registry, "ExtA-11111"), name="uses A")
    uses_b = create_flow(client, alice, flow_of("ExtB", registry, "ExtB-22222"), name="uses B")
    create_flow(client, alice, flow_of("ExtKeep", registry, "ExtKeep-3"), name="untouched")
    cursor = events(client, alice)["events"]
    assert cursor == []  # the first reload touched none of alice's flows (she had none)

    write_bundle(
        site,
        DIST,
        "alpha",
        "svc_ext_alpha",
        [component("ExtA", extra_input=True), component("ExtKeep"), component("ExtC")],
    )
    response = reload(client, admin)
    assert response.status_code == 200, response.get_json()
    result = response.get_json()
    assert result["components_added"] == ["ExtC"]
    assert result["components_removed"] == ["ExtB"]
    assert result["components_changed"] == ["ExtA"]
    affected = {f["flow_id"]: f for f in result["flows_affected"]}
    assert set(affected) == {uses_a["id"], uses_b["id"]}
    assert affected[uses_a["id"]]["nodes"] == [{"id": "ExtA-11111", "type": "ExtA", "change": "changed"}]
    assert affected[uses_b["id"]]["nodes"] == [{"id": "ExtB-22222", "type": "ExtB", "change": "removed"}]
    assert affected[uses_a["id"]]["user_id"] == alice.id
    assert catalog_keys(client, admin) == {"ExtA", "ExtKeep", "ExtC"}

    # the owner of the flows is told which flows and nodes; she never sees the reload events themselves
    mine = events(client, alice)
    assert mine["settled"] is True
    assert [e["type"] for e in mine["events"]] == ["flow_migration"]
    migration = mine["events"][0]
    assert {f["flow_id"] for f in migration["payload"]["flows"]} == {uses_a["id"], uses_b["id"]}
    # the reloading superuser sees both reloads, started then succeeded, with the component diff
    admin_events = events(client, admin)["events"]
    kinds = [e["type"] for e in admin_events]
    assert kinds == ["bundle_reload_started", "bundle_reload_succeeded"] * 2
    assert admin_events[-1]["payload"]["components_removed"] == ["ExtB"]
    # the cursor: nothing after the last event
    assert events(client, admin, since=admin_events[-1]["timestamp"])["events"] == []
    assert len(events(client, admin, since=admin_events[1]["timestamp"])["events"]) == 2


BROKEN = {
    "import-failed": dict(components=[component("ExtEcho")], prelude="raise RuntimeError('bundle is broken')\n"),
    "syntax": dict(components=[component("ExtEcho")], prelude="def broken(:\n"),
    "source-missing": dict(components=[], module_missing=True),
    "declared-name-mismatch": dict(components=[component("ExtEcho")], declared_name="other"),
    "duplicate-with-standard": dict(components=[component("ChatInput")]),
    "duplicate-inside": dict(components=[component("ExtEcho"), component("ExtEcho")]),
}
CODES = {
    "import-failed": "extension-import-failed",
    "syntax": "extension-import-failed",
    "source-missing": "extension-source-missing",
    "declared-name-mismatch": "extension-name-mismatch",
    "duplicate-with-standard": "extension-duplicate-component",
    "duplicate-inside": "extension-duplicate-component",
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_bundle_is_422_with_the_typed_result_and_changes_nothing(app, client, admin, site, case):
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtGood")])
    assert reload(client, admin).status_code == 200
    before = state(app).components.current
    gen = generation(state(app).shared, COMPONENTS_GEN)
    spec = dict(BROKEN[case])
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", spec.pop("components"), **spec)

    response = reload(client, admin)
    assert response.status_code == 422, response.get_json()
    detail = response.get_json()["detail"]
    assert detail["code"] == CODES[case]
    assert {"code", "message", "location", "content", "hint", "ref_url", "result"} <= set(detail)
    result = detail["result"]
    assert set(result) >= {
        "ok",
        "bundle",
        "reload_id",
        "components_added",
        "components_removed",
        "components_changed",
        "errors",
        "warnings",
    }
    assert result["ok"] is False and result["bundle"] == "alpha"
    assert result["errors"][0]["code"] == CODES[case]
    # nothing changed: same snapshot, same generation, the old component still runs
    assert state(app).components.current is before
    assert generation(state(app).shared, COMPONENTS_GEN) == gen
    assert catalog_keys(client, admin) == {"ExtGood"}
    assert events(client, admin)["events"][-1]["type"] == "bundle_reload_failed"
    assert events(client, admin)["settled"] is True


def test_a_wrong_extension_id_is_a_name_mismatch_and_an_unknown_bundle_404(client, admin, site):
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtEcho")])
    response = reload(client, admin, extension="somebody-else")
    assert response.status_code == 422
    assert response.get_json()["detail"]["code"] == "extension-name-mismatch"
    response = reload(client, admin, bundle="nope")
    assert response.status_code == 404
    assert response.get_json()["detail"]["code"] == "extension-not-found"


def test_a_second_reload_while_one_runs_is_409(app, client, admin, site):
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtEcho")], prelude="time.sleep(1.0)\n")
    first: dict = {}

    def go():
        first["response"] = app.test_client().post(
            f"/api/v1/extensions/{DIST}/bundles/alpha/reload", headers=admin.bearer
        )

    thread = threading.Thread(target=go)
    thread.start()
    deadline = time.monotonic() + 5
    while state(app).shared.get(RELOAD_LOCK) is None:
        assert time.monotonic() < deadline, "the first reload never started"
        time.sleep(0.01)
    assert events(client, admin)["settled"] is False
    second = reload(client, admin)
    assert second.status_code == 409
    assert second.get_json()["detail"]["code"] == "extension-reload-in-progress"
    thread.join()
    assert first["response"].status_code == 200
    assert events(client, admin)["settled"] is True
    assert reload(client, admin).status_code == 200  # the lock is free again


def test_keyspace_is_422_and_events_need_a_caller(client, admin):
    response = client.get("/api/v1/extensions/events?since=0&keyspace=other", headers=admin.bearer)
    assert response.status_code == 422
    assert response.get_json()["detail"]["code"] == "extension-events-keyspace-rejected"
    assert client.get("/api/v1/extensions/events").status_code == 403
    assert client.get("/api/v1/extensions/events?since=abc", headers=admin.bearer).status_code == 422


def test_a_run_in_flight_finishes_on_the_registry_it_started_with(app, client, admin, site):
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtSlow", "v1", sleep=1.0)])
    assert reload(client, admin).status_code == 200
    flow = create_flow(client, admin, flow_of("ExtSlow", state(app).components.current))
    out: dict = {}

    def go():
        out["text"] = run_text(app.test_client(), admin, flow["id"], "old")

    thread = threading.Thread(target=go)
    thread.start()
    time.sleep(0.4)  # the run is inside ExtSlow v1
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtSlow", "v2")])
    response = reload(client, admin)
    assert response.status_code == 200
    assert response.get_json()["components_changed"] == []  # same node shape, new code
    thread.join()
    assert out["text"].startswith("old|v1|")
    assert run_text(client, admin, flow["id"], "new").startswith("new|v2|")


def test_an_uninstalled_bundle_reload_is_404_and_keeps_its_components(app, client, admin, site):
    write_bundle(site, DIST, "alpha", "svc_ext_alpha", [component("ExtEcho")])
    assert reload(client, admin).status_code == 200
    remove_bundle(site, DIST, "svc_ext_alpha")
    response = reload(client, admin)
    assert response.status_code == 404
    assert catalog_keys(client, admin) == {"ExtEcho"}
