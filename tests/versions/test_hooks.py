"""The contracts of issue 31 between plugins, each side alone: ``on_audit`` (core), the flows plugin's
``published_version`` and ``on_flow_changed(author_id)``, the versions plugin's ``restore_flow``."""

from __future__ import annotations

from service_versions import hookspecs as version_specs

from core import appstate, hookimpl
from core.contracts import AuditEntry, PublishedVersion
from tests.versions.vkit import create, graph


class Recorder:
    def __init__(self) -> None:
        self.entries: list[AuditEntry] = []
        self.published: dict[str, PublishedVersion] = {}
        self.saves: list[tuple[str, str | None]] = []

    @hookimpl
    def on_audit(self, entry: AuditEntry) -> None:
        self.entries.append(entry)

    @hookimpl(optionalhook=True)
    def published_version(self, flow_id: str) -> PublishedVersion | None:
        return self.published.get(flow_id)

    @hookimpl(optionalhook=True)
    def on_flow_changed(self, flow_id, user_id, flow, author_id, autosave) -> None:
        self.saves.append((flow_id, author_id))


def test_owning_plugins_notify_on_audit_without_the_versions_plugin(make_app):
    recorder = Recorder()
    app = make_app(plugins=["accounts", "flows", ("recorder", recorder)])
    client = app.test_client()
    from tests.conftest import make_user, superuser

    alice = make_user(client, superuser(client), username="alice")
    flow = create(client, alice, graph("a"))
    kinds = [(e.action, e.resource_type, e.actor_type) for e in recorder.entries]
    assert ("flow:create", "flow", "user") in kinds and ("api_key:create", "api_key", "user") in kinds
    created = next(e for e in recorder.entries if e.action == "flow:create")
    assert created.resource_id == flow["id"] and created.user_id == alice.id and created.actor_id == alice.id
    assert recorder.saves[-1] == (flow["id"], alice.id)  # on_flow_changed names the author


def test_find_flow_asks_published_version_except_for_drafts(make_app):
    recorder = Recorder()
    app = make_app(plugins=["accounts", "flows", ("recorder", recorder)])
    client = app.test_client()
    from tests.conftest import make_user, superuser

    alice = make_user(client, superuser(client), username="alice")
    flow = create(client, alice, graph("draft"))
    saved = "2026-01-01T00:00:00+00:00"
    recorder.published[flow["id"]] = PublishedVersion(
        flow_id=flow["id"], version_id="v", version_number=7, data=graph("published"), saved_at=saved
    )
    with app.app_context():
        hooks = appstate.hooks()
        api = hooks.find_flow(user_id=alice.id, flow_id_or_name=flow["id"], public=False)
        editor = hooks.find_flow(user_id=alice.id, flow_id_or_name=flow["id"], public=False, draft=True)
    assert api is not None and editor is not None
    assert api.published_version == 7 and api.updated_at == "2026-01-01T00:00:00+00:00"
    assert api.data == graph("published") and editor.data == graph("draft") and editor.published_version is None


def test_restore_flow_is_answered_by_the_flows_plugin(app, client, alice, bob):
    flow = create(client, alice, graph("a"))
    with app.test_request_context():
        hooks = appstate.hooks()
        written = hooks.first(
            version_specs.restore_flow, user_id=alice.id, flow_id=flow["id"], data=graph("b"), expected_token=None
        )
        foreign = hooks.first(
            version_specs.restore_flow, user_id=bob.id, flow_id=flow["id"], data=graph("c"), expected_token=None
        )
        from core import db

        db.session().commit()
    assert written is not None and written.data == graph("b") and written.version_token != flow["version_token"]
    assert foreign is None
