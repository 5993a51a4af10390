"""The executor enforces ``SERVICE_TWEAKS_POLICY`` as the full service does: same refusals, same answers, the
variable read the same way (issue 29: one run path, two adapters)."""

from __future__ import annotations

import pytest
from service_exec.cli import main
from service_exec.engine import Executor, Flow, FlowError, Settings
from service_exec.server import create_app

from core.engine.errors import RunRefused
from core.engine.tweaks import POLICIES
from core.settings import Settings as ServiceSettings
from core.settings import SettingsError
from tests.conftest import make_user, superuser
from tests.flowkit import standard_registry
from tests.run.runkit import chat_echo, create_flow

KEY = "executor-tweaks-key-0123456789"
PLUGINS = ["accounts", "flows", "variables", "run", "standard"]

#: tweak bodies a restrictive policy refuses (component fields, top-level fields, unknown components), one the
#: ``declared`` policy accepts, and an input given twice
REFUSED = [
    {"ChatOutput-BBBBB": {"sender": "User"}},
    {"Chat Output": {"sender_name": "ok", "sender": "User"}},
    {"sender_name": "everyone"},
    {"Ghost-1": {"sender_name": "x"}},
]
DECLARED_OK = {"ChatOutput-BBBBB": {"sender_name": "Declared"}}


def declared_flow() -> dict:
    """Chat echo whose Chat Output declares ``sender_name`` editable by API (and nothing else)."""
    data = chat_echo()
    data["nodes"][1]["data"]["node"]["template"]["sender_name"]["api_editable"] = True
    return data


def executor_client(policy: str):
    ex = Executor(standard_registry(), Settings(api_key=KEY, tweaks_policy=policy))
    ex.add(Flow("flow-id", "flow", None, declared_flow(), "flow.json"))
    return ex, create_app(ex).test_client()


def _answers(client, url: str, headers: dict, tweaks: dict, input_value: str | None = "hi") -> tuple[int, dict]:
    body = {"tweaks": tweaks} if input_value is None else {"input_value": input_value, "tweaks": tweaks}
    response = client.post(url, json=body, headers=headers)
    return response.status_code, response.get_json()


@pytest.mark.parametrize("policy", ["declared", "off"])
def test_the_executor_refuses_what_the_service_refuses_with_the_same_answer(make_app, policy):
    app = make_app(plugins=PLUGINS, tweaks_policy=policy)
    web = app.test_client()
    user = make_user(web, superuser(web))
    flow = create_flow(web, user, declared_flow())
    _ex, exe = executor_client(policy)
    exe_headers = {"x-api-key": KEY}
    for tweaks in [*REFUSED, DECLARED_OK]:
        status, body = _answers(web, f"/api/v1/run/{flow['id']}", user.key, tweaks)
        got_status, got = _answers(exe, "/api/v1/run/flow-id", exe_headers, tweaks)
        if policy == "declared" and tweaks is DECLARED_OK:
            assert status == got_status == 200
            assert got["outputs"][0]["outputs"][0]["messages"][0]["sender_name"] == "Declared"
            continue
        assert status == 422 and body["detail"]["code"] == "TWEAKS_REFUSED", body
        assert (got_status, got) == (status, body), tweaks
        # the v2 workflow endpoint refuses the same way
        v2 = exe.post("/api/v2/workflows", json={"flow_id": "flow-id", "tweaks": tweaks}, headers=exe_headers)
        assert (v2.status_code, v2.get_json()) == (status, body)


def test_an_input_given_twice_is_refused_alike(make_app):
    app = make_app(plugins=PLUGINS)
    web = app.test_client()
    user = make_user(web, superuser(web))
    flow = create_flow(web, user, declared_flow())
    _ex, exe = executor_client("permissive")
    tweaks = {"ChatInput-AAAAA": {"input_value": "from the tweak"}}
    status, body = _answers(web, f"/api/v1/run/{flow['id']}", user.key, tweaks)
    assert status == 400 and "cannot pass a tweak with the same name" in body["detail"]
    assert _answers(exe, "/api/v1/run/flow-id", {"x-api-key": KEY}, tweaks) == (status, body)
    # without an input value the tweak is the input, on both
    for client, url, headers in (
        (web, f"/api/v1/run/{flow['id']}", user.key),
        (exe, "/api/v1/run/flow-id", {"x-api-key": KEY}),
    ):
        ok, answer = _answers(client, url, headers, tweaks, input_value=None)
        assert ok == 200 and answer["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "from the tweak"


def test_the_permissive_default_applies_any_tweak():
    ex, exe = executor_client("permissive")
    status, body = _answers(exe, "/api/v1/run/flow-id", {"x-api-key": KEY}, {"ChatOutput-BBBBB": {"sender": "User"}})
    assert status == 200, body
    result = ex.run(ex.find("flow"), "hi", tweaks={"Chat Output": {"sender_name": "Anyone"}})
    assert result.ok and result.results["ChatOutput-BBBBB"].outputs["message"].sender_name == "Anyone"


def test_executor_run_and_build_raise_the_engine_refusal():
    ex, _client = executor_client("off")
    with pytest.raises(RunRefused) as refused:
        ex.run(ex.find("flow"), "hi", tweaks={"ChatOutput-BBBBB": {"sender_name": "x"}})
    assert refused.value.status == 422 and refused.value.detail["policy"] == "off"
    assert ex.run(ex.find("flow"), "hi", tweaks={}).ok  # an empty tweaks object is fine


@pytest.mark.parametrize("raw", ["off", " Declared ", "PERMISSIVE", "permissive", "bogus", "", "of f"])
def test_the_variable_is_read_as_the_service_reads_it(raw):
    env = {"SERVICE_TWEAKS_POLICY": raw, "SERVICE_ENV_FILE": "/nonexistent/.env"}
    try:
        expected: str | None = ServiceSettings.load(environ=env).tweaks_policy
    except SettingsError as exc:
        expected, message = None, str(exc)
    if expected is None:
        with pytest.raises(FlowError) as bad:
            Settings.from_env(env)
        assert str(bad.value) == message
    else:
        assert Settings.from_env(env).tweaks_policy == expected
    assert Settings.from_env({}).tweaks_policy == ServiceSettings.load(environ={"SERVICE_ENV_FILE": "/x"}).tweaks_policy
    assert ServiceSettings.__dataclass_fields__["tweaks_policy"].metadata["choices"] == POLICIES


def test_run_exits_2_on_a_refused_tweak_and_serve_keeps_the_catalog_policy(tmp_path, monkeypatch, capsys):
    import json

    path = tmp_path / "flow.json"
    path.write_text(json.dumps({"id": "flow-id", "name": "flow", "data": declared_flow()}))
    monkeypatch.setenv("SERVICE_TWEAKS_POLICY", "off")
    assert main(["run", str(path), "--input", "hi", "--tweaks", '{"ChatOutput-BBBBB": {"sender_name": "x"}}']) == 2
    err = capsys.readouterr().err
    assert "Tweaks refused by SERVICE_TWEAKS_POLICY=off: ChatOutput-BBBBB.sender_name" in err
    assert main(["run", str(path), "--input", "hi"]) == 0  # no tweaks: runs
    monkeypatch.setenv("SERVICE_TWEAKS_POLICY", "sometimes")
    assert main(["run", str(path), "--input", "hi"]) == 2
    assert "SERVICE_TWEAKS_POLICY: must be one of permissive, declared, off" in capsys.readouterr().err
    # the catalog policy still applies with a tweak policy set
    monkeypatch.setenv("SERVICE_TWEAKS_POLICY", "declared")
    monkeypatch.setenv("SERVICE_POLICIES_BLOCKED_COMPONENTS", "ChatOutput")
    assert main(["run", str(path), "--input", "hi", "--tweaks", json.dumps(DECLARED_OK)]) == 2
    assert "blocked by the catalog policy" in capsys.readouterr().err
