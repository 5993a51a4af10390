"""The signed ingress's allowance per trigger: verified deliveries past it are 429 with Retry-After; refusals
stay the same 404 and never spend it."""

from __future__ import annotations

import pytest

from tests.run.runkit import create_flow
from tests.triggers.conftest import TRIGGERS
from tests.triggers.test_webhooks import deliver, make_trigger, webhook_flow


@pytest.fixture
def app(make_app, recorder):
    return make_app(plugins=[*TRIGGERS, ("recorder", recorder)], triggers_tick_s=0, triggers_ingress_per_minute=2)


def test_a_trigger_takes_its_allowance_per_minute_then_429_with_retry_after(app, client, alice):
    flow = create_flow(client, alice, webhook_flow())
    trigger = make_trigger(client, alice, flow["id"])
    other = make_trigger(client, alice, flow["id"])
    for _ in range(5):  # wrong secrets: the same 404, and the allowance is untouched
        refused = deliver(client, trigger, b"{}", secret="whsec_wrong")
        assert refused.status_code == 404 and refused.get_json() == {"detail": "Not found"}
    assert deliver(client, trigger, b'{"n": 1}').status_code == 202
    assert deliver(client, trigger, b'{"n": 2}').status_code == 202
    limited = deliver(client, trigger, b'{"n": 3}')
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    assert limited.get_json() == {
        "detail": "Too many requests. Please try again later.",
        "retry_after": limited.headers["Retry-After"],  # the shape of the service's other 429s
    }
    assert deliver(client, trigger, b"{}", secret="whsec_wrong").status_code == 404  # still no hint
    assert client.post("/api/v1/triggers/ingress/webhook/unknown-id-123", data=b"{}").status_code == 404
    assert deliver(client, other, b'{"n": 3}').status_code == 202  # each trigger counts its own


def test_a_client_address_takes_its_allowance_per_minute_whatever_it_sends(make_app, recorder):
    """Every request of an address counts, refused ones too, before any lookup: past the allowance 429 (the core's
    answer, Retry-After) for an unknown id as for a good delivery, so it tells a prober nothing; another address
    is not limited."""
    from tests.conftest import make_user, superuser

    app = make_app(
        plugins=[*TRIGGERS, ("recorder", recorder)], triggers_tick_s=0, triggers_ingress_per_address_per_minute=3
    )
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    flow = create_flow(client, alice, webhook_flow())
    trigger = make_trigger(client, alice, flow["id"])
    assert client.post("/api/v1/triggers/ingress/webhook/unknown-id-123", data=b"{}").status_code == 404
    assert deliver(client, trigger, b"{}", secret="whsec_wrong").status_code == 404
    assert deliver(client, trigger, b'{"n": 1}').status_code == 202
    for limited in (
        deliver(client, trigger, b'{"n": 2}'),
        client.post("/api/v1/triggers/ingress/webhook/unknown-id-123", data=b"{}"),
    ):
        assert limited.status_code == 429
        assert limited.get_json()["detail"] == "Too many requests. Please try again later."
        assert int(limited.headers["Retry-After"]) > 0
    elsewhere = app.test_client()
    elsewhere.environ_base["REMOTE_ADDR"] = "10.1.2.3"
    assert deliver(elsewhere, trigger, b'{"n": 3}').status_code == 202
    assert elsewhere.post("/api/v1/triggers/ingress/webhook/unknown-id-123", data=b"{}").status_code == 404
    listed = client.get("/api/v1/executions", query_string={"trigger": "trigger"}, headers=alice.key).get_json()
    assert len(listed) == 2  # the limited delivery was not recorded
