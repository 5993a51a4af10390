"""Tweaks under each SERVICE_TWEAKS_POLICY, global-variable headers and the body ``context``."""

from __future__ import annotations

import pytest

from tests.run.conftest import PLUGINS
from tests.run.runkit import answer, chat_echo, create_flow


def _sender_name(body) -> str:
    return body["outputs"][0]["outputs"][0]["messages"][0]["sender_name"]


def _declared_flow():
    """Chat echo whose Chat Output declares ``sender_name`` editable by API (and nothing else)."""
    data = chat_echo()
    data["nodes"][1]["data"]["node"]["template"]["sender_name"]["api_editable"] = True
    return data


@pytest.fixture
def policy_app(make_app, recorder):
    def build(policy):
        return make_app(plugins=[*PLUGINS, ("recorder", recorder)], tweaks_policy=policy)

    return build


def _client_and_users(app):
    from tests.conftest import make_user, superuser

    client = app.test_client()
    admin = superuser(client)
    return client, make_user(client, admin)


# --- permissive (default) ----------------------------------------------------------------------------
def test_permissive_by_id_display_name_and_top_level(client, alice):
    flow = create_flow(client, alice, chat_echo())
    url = f"/api/v1/run/{flow['id']}"

    def run(tweaks):
        response = client.post(url, json={"input_value": "t", "tweaks": tweaks}, headers=alice.key)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    assert _sender_name(run({"ChatOutput-BBBBB": {"sender_name": "By Id"}})) == "By Id"
    assert _sender_name(run({"Chat Output": {"sender_name": "By Name"}})) == "By Name"
    # the id wins over the display name
    both = run({"Chat Output": {"sender_name": "name"}, "ChatOutput-BBBBB": {"sender_name": "id"}})
    assert _sender_name(both) == "id"
    # a top-level value applies to every component having the field
    body = run({"sender_name": "Everyone"})
    assert _sender_name(body) == "Everyone"
    # unknown targets are ignored (as the reference)
    assert _sender_name(run({"Nobody-1": {"x": 1}})) == "AI"
    # a tweak also sets fields the editor hid (show: false) and is never a variable lookup
    data = chat_echo()
    field = data["nodes"][1]["data"]["node"]["template"]["sender_name"]
    field.update(show=False, load_from_db=True, value="SOME_VAR")
    hidden = create_flow(client, alice, data, name="hidden")
    response = client.post(
        f"/api/v1/run/{hidden['id']}",
        json={"input_value": "x", "tweaks": {"ChatOutput-BBBBB": {"sender_name": "Shown"}}},
        headers=alice.key,
    )
    assert _sender_name(response.get_json()) == "Shown"


# --- declared -------------------------------------------------------------------------------------------
def test_declared_accepts_only_api_editable_fields(policy_app):
    app = policy_app("declared")
    client, user = _client_and_users(app)
    flow = create_flow(client, user, _declared_flow())
    url = f"/api/v1/run/{flow['id']}"
    ok = client.post(
        url, json={"input_value": "d", "tweaks": {"ChatOutput-BBBBB": {"sender_name": "Declared"}}}, headers=user.key
    )
    assert ok.status_code == 200 and _sender_name(ok.get_json()) == "Declared"
    by_name = client.post(
        url, json={"input_value": "d", "tweaks": {"Chat Output": {"sender_name": "N"}}}, headers=user.key
    )
    assert by_name.status_code == 200 and _sender_name(by_name.get_json()) == "N"

    refused = client.post(
        url,
        json={"input_value": "d", "tweaks": {"ChatOutput-BBBBB": {"sender_name": "ok", "sender": "User"}}},
        headers=user.key,
    )
    assert refused.status_code == 422
    detail = refused.get_json()["detail"]
    assert detail["code"] == "TWEAKS_REFUSED" and detail["policy"] == "declared"
    assert detail["refused"] == [
        {"component": "ChatOutput-BBBBB", "field": "sender", "reason": "field is not declared api_editable"}
    ]
    assert "ChatOutput-BBBBB.sender" in detail["message"]

    unknown = client.post(url, json={"tweaks": {"Ghost-1": {"sender_name": "x"}}}, headers=user.key)
    assert unknown.status_code == 422
    assert unknown.get_json()["detail"]["refused"][0] == {
        "component": "Ghost-1",
        "field": "sender_name",
        "reason": "no such component",
    }
    # a top-level tweak must be declared on every component having the field (Chat Input's is not)
    top = client.post(url, json={"tweaks": {"sender_name": "all"}}, headers=user.key)
    assert top.status_code == 422 and top.get_json()["detail"]["refused"][0]["field"] == "sender_name"
    # without tweaks, runs are unaffected
    assert client.post(url, json={"input_value": "z"}, headers=user.key).status_code == 200


def test_off_refuses_every_tweak(policy_app):
    app = policy_app("off")
    client, user = _client_and_users(app)
    flow = create_flow(client, user, _declared_flow())
    url = f"/api/v1/run/{flow['id']}"
    refused = client.post(url, json={"tweaks": {"ChatOutput-BBBBB": {"sender_name": "x"}}}, headers=user.key)
    assert refused.status_code == 422
    detail = refused.get_json()["detail"]
    assert detail["code"] == "TWEAKS_REFUSED" and detail["policy"] == "off"
    assert detail["refused"] == [
        {"component": "ChatOutput-BBBBB", "field": "sender_name", "reason": "tweaks are disabled"}
    ]
    top = client.post(url, json={"tweaks": {"sender_name": "x"}}, headers=user.key)
    assert top.status_code == 422 and top.get_json()["detail"]["refused"][0]["field"] == "sender_name"
    for empty in ({}, None):
        ok = client.post(url, json={"input_value": "fine", "tweaks": empty}, headers=user.key)
        assert ok.status_code == 200 and answer(ok.get_json()) == "fine"
    # the advanced run follows the policy too
    adv = client.post(
        f"/api/v1/run/advanced/{flow['id']}", json={"tweaks": {"Chat Output": {"sender": "User"}}}, headers=user.key
    )
    assert adv.status_code == 422 and adv.get_json()["detail"]["code"] == "TWEAKS_REFUSED"


# --- global variables -------------------------------------------------------------------------------------
def _variable_flow():
    """Chat Output's sender name comes from global variable ``BOT_NAME``."""
    data = chat_echo()
    field = data["nodes"][1]["data"]["node"]["template"]["sender_name"]
    field.update(load_from_db=True, value="BOT_NAME")
    return data


def test_global_variable_headers(client, alice):
    flow = create_flow(client, alice, _variable_flow())
    url = f"/api/v1/run/{flow['id']}"
    missing = client.post(url, json={"input_value": "v"}, headers=alice.key)
    assert missing.status_code == 500
    assert "variable 'BOT_NAME' not found" in missing.get_json()["detail"]
    assert "Chat Output (ChatOutput-BBBBB)" in missing.get_json()["detail"]
    for header in ("X-SERVICE-GLOBAL-VAR-BOT_NAME", "x-service-global-var-bot_name"):
        response = client.post(url, json={"input_value": "v"}, headers={**alice.key, header: "Header Bot"})
        assert response.status_code == 200, response.get_json()
        assert _sender_name(response.get_json()) == "Header Bot"


def test_stored_variable_and_header_override(client, alice):
    flow = create_flow(client, alice, _variable_flow())
    created = client.post(
        "/api/v1/variables/",
        json={"name": "BOT_NAME", "value": "Stored Bot", "type": "Generic", "default_fields": []},
        headers=alice.bearer,
    )
    assert created.status_code == 201, created.get_json()
    url = f"/api/v1/run/{flow['id']}"
    stored = client.post(url, json={"input_value": "v"}, headers=alice.key)
    assert _sender_name(stored.get_json()) == "Stored Bot"
    header = client.post(url, json={"input_value": "v"}, headers={**alice.key, "X-SERVICE-GLOBAL-VAR-BOT_NAME": "H"})
    assert _sender_name(header.get_json()) == "H"


def test_variables_of_other_users_are_not_used(client, alice, bob):
    client.post(
        "/api/v1/variables/",
        json={"name": "BOT_NAME", "value": "Bob's", "type": "Generic", "default_fields": []},
        headers=bob.bearer,
    )
    flow = create_flow(client, alice, _variable_flow())
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "v"}, headers=alice.key)
    assert response.status_code == 500 and "BOT_NAME" in response.get_json()["detail"]


def test_context_is_merged_with_request_variables(client, alice):
    flow = create_flow(client, alice, _variable_flow())
    url = f"/api/v1/run/{flow['id']}"
    nested = client.post(
        url, json={"input_value": "v", "context": {"request_variables": {"BOT_NAME": "Ctx"}}}, headers=alice.key
    )
    assert nested.status_code == 200 and _sender_name(nested.get_json()) == "Ctx"
    flat = client.post(url, json={"input_value": "v", "context": {"BOT_NAME": "Flat"}}, headers=alice.key)
    assert _sender_name(flat.get_json()) == "Flat"
    # headers win over the body context
    both = client.post(
        url,
        json={"input_value": "v", "context": {"BOT_NAME": "Ctx"}},
        headers={**alice.key, "X-SERVICE-GLOBAL-VAR-BOT_NAME": "Hdr"},
    )
    assert _sender_name(both.get_json()) == "Hdr"
    bad = client.post(url, json={"context": "nope"}, headers=alice.key)
    assert bad.status_code == 422
