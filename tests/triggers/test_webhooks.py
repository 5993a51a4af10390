"""Signed webhook triggers: valid, missing, wrong and stale signatures (one 404 for every refusal), duplicates."""

from __future__ import annotations

import json
import time

from service_triggers.webhooks import sign

from tests.run.runkit import chat_echo, create_flow, edge, flow_data, node
from tests.triggers.test_executions import executions, settle


def webhook_flow() -> dict:
    hook = node("Webhook", "Webhook-WWWWW")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow_data([hook, chat_out], [edge(hook, "output_data", chat_out, "input_value")])


def make_trigger(client, caller, flow_id: str) -> dict:
    response = client.post("/api/v1/triggers", json={"flow_id": flow_id}, headers=caller.key)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def deliver(client, trigger, body: bytes, *, secret=None, timestamp=None, headers=None):
    ts = int(time.time()) if timestamp is None else timestamp
    sent = {"X-Service-Timestamp": str(ts), "X-Service-Signature": sign(secret or trigger["signing_secret"], ts, body)}
    sent.update(headers or {})
    return client.post(trigger["ingress_url"], data=body, headers=sent, content_type="application/json")


def test_a_signed_delivery_is_recorded_answered_202_and_runs(app, client, alice):
    flow = create_flow(client, alice, webhook_flow())
    trigger = make_trigger(client, alice, flow["id"])
    assert trigger["signing_secret"].startswith("whsec_") and trigger["signature_header"] == "X-Service-Signature"
    response = deliver(client, trigger, b'{"order": 42}')
    assert response.status_code == 202, response.get_json()
    body = response.get_json()
    assert body["duplicate"] is False and body["status_url"] == f"/api/v1/executions/{body['run_id']}"
    settle(app)
    status = client.get(body["status_url"], headers=alice.key).get_json()
    assert status["trigger"] == "trigger" and status["status"] == "ok" and status["source_id"] == trigger["id"]
    assert json.loads(status["input"]) == {"order": 42}
    assert "secret" not in json.dumps(client.get(f"/api/v1/triggers/{trigger['id']}", headers=alice.key).get_json())


def test_every_refusal_is_the_same_404(app, client, alice, bob):
    flow = create_flow(client, alice, webhook_flow())
    trigger = make_trigger(client, alice, flow["id"])
    body = b'{"a": 1}'
    now = int(time.time())
    refusals = [
        deliver(client, trigger, body, secret="whsec_wrong"),  # a sender with the wrong secret
        deliver(client, trigger, body, timestamp=now - 3600),  # stale
        deliver(client, trigger, body, timestamp=now + 3600),  # from the future
        client.post(trigger["ingress_url"], data=body),  # no signature at all
        client.post(trigger["ingress_url"], data=body, headers={"X-Service-Timestamp": str(now)}),
        deliver(client, {**trigger, "ingress_url": "/api/v1/triggers/ingress/webhook/unknownid123"}, body),
        deliver(client, {**trigger, "ingress_url": "/api/v1/triggers/ingress/webhook/x"}, body),
    ]
    tampered = {"X-Service-Timestamp": str(now), "X-Service-Signature": sign(trigger["signing_secret"], now, b"{}")}
    refusals.append(client.post(trigger["ingress_url"], data=body, headers=tampered))
    for response in refusals:
        assert (response.status_code, response.get_json()) == (404, {"detail": "Not found"})
    assert (
        client.patch(f"/api/v1/triggers/{trigger['id']}", json={"enabled": False}, headers=bob.key).status_code == 404
    )
    client.patch(f"/api/v1/triggers/{trigger['id']}", json={"enabled": False}, headers=alice.key)
    assert deliver(client, trigger, body).status_code == 404  # paused
    settle(app)
    assert executions(client, alice) == []


def test_duplicates_are_dropped_by_event_id_or_by_body(app, client, alice):
    flow = create_flow(client, alice, webhook_flow())
    trigger = make_trigger(client, alice, flow["id"])
    ts = int(time.time())
    first = deliver(client, trigger, b'{"n": 1}', timestamp=ts).get_json()
    again = deliver(client, trigger, b'{"n": 1}', timestamp=ts)
    assert again.status_code == 202 and again.get_json()["duplicate"] is True
    assert again.get_json()["run_id"] == first["run_id"]
    keyed = deliver(client, trigger, b'{"n": 2}', headers={"Idempotency-Key": "evt-1"}).get_json()
    resent = deliver(client, trigger, b'{"n": 2, "retry": true}', headers={"Idempotency-Key": "evt-1"}).get_json()
    assert resent["duplicate"] is True and resent["run_id"] == keyed["run_id"]
    settle(app)
    assert len(executions(client, alice, trigger="trigger")) == 2


def test_rotating_the_secret_refuses_the_old_one(app, client, alice):
    flow = create_flow(client, alice, chat_echo())
    trigger = make_trigger(client, alice, flow["id"])
    rotated = client.post(f"/api/v1/triggers/{trigger['id']}/signing-secret", headers=alice.key).get_json()
    assert rotated["signing_secret"] != trigger["signing_secret"]
    assert deliver(client, trigger, b"{}").status_code == 404
    assert deliver(client, rotated, b"{}").status_code == 202
    settle(app)


def test_the_existing_webhook_route_still_works(app, client, alice):
    flow = create_flow(client, alice, webhook_flow())
    response = client.post(f"/api/v1/webhook/{flow['id']}", data='{"x": 1}', headers=alice.key)
    assert response.status_code == 202 and "job_id" in response.get_json()
    settle(app)
    [found] = executions(client, alice)
    assert found["trigger"] == "webhook" and found["status"] == "ok"


def test_secret_key_rotation_reencrypts_the_signing_secrets(app, client, alice):
    from cryptography.fernet import Fernet, MultiFernet

    from core import appstate, db
    from core.secrets import fernet, fernet_key

    flow = create_flow(client, alice, chat_echo())
    trigger = make_trigger(client, alice, flow["id"])
    new = Fernet(fernet_key("a brand new secret key"))
    with app.app_context():
        old = fernet(appstate.settings(app))
        from service_variables import hookspecs

        cipher = MultiFernet([new, *old._fernets])
        [count] = [c for c in appstate.hooks(app).each(hookspecs.reencrypt_secrets, cipher=cipher) if c]
        db.session().commit()
        import sqlalchemy as sa

        [token] = db.session().execute(sa.text("SELECT secret FROM triggers_webhook")).scalars().all()
    assert count == 1 and new.decrypt(token.encode()).decode() == trigger["signing_secret"]
