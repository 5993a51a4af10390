"""Built-in endpoints, error shapes, CORS and the OpenAPI document."""

import types

import pytest
from flask_smorest import Blueprint
from marshmallow import Schema, fields

from core import hookimpl
from tests.conftest import superuser


def _plugin_with_routes():
    module = types.ModuleType("probe")
    blp = Blueprint("probe", "probe", url_prefix="/api/v1/probe")

    class Body(Schema):
        name = fields.String(required=True)
        count = fields.Integer(required=True)

    @blp.route("/echo", methods=["POST"])
    @blp.arguments(Body)
    def echo(body):
        return body

    @blp.route("/boom")
    def boom():
        raise RuntimeError("secret internal detail /etc/passwd")

    @hookimpl
    def register_blueprints():
        return [blp]

    module.register_blueprints = register_blueprints
    return ("probe", module)


@pytest.fixture
def probe_client(make_app):
    return make_app(plugins=["accounts", _plugin_with_routes()]).test_client()


def test_health_and_version(client):
    assert client.get("/health").get_json() == {"status": "ok"}
    body = client.get("/health_check").get_json()
    assert body["status"] == "ok" and body["db"] == "ok" and body["chat"] == "ok"
    assert body["redis"] == "not configured"
    version = client.get("/api/v1/version").get_json()
    assert set(version) == {"version", "main_version", "package"}


def test_health_check_reports_redis_when_configured(make_app):
    body = make_app(redis_url="redis://127.0.0.1:6379/0").test_client().get("/health_check").get_json()
    assert body["redis"] == "ok"
    down = make_app(redis_url="redis://127.0.0.1:1/0").test_client().get("/health_check")
    assert down.status_code == 500
    assert down.get_json()["detail"]["redis"] == "error"


SPEC_CONFIG_MEMBERS = {
    "a2a_enabled",
    "agentic_experience",
    "allow_custom_components",
    "assistant_max_message_length",
    "authz_enabled",
    "auto_saving",
    "auto_saving_interval",
    "blocked_component_types",
    "catalog_governance_enabled",
    "custom_component_admin_only",
    "default_folder_name",
    "embedded_mode",
    "enable_extension_reload",
    "event_delivery",
    "feature_flags",
    "frontend_timeout",
    "health_check_max_retries",
    "hide_getting_started_progress",
    "hide_logout_button",
    "hide_new_flow_button",
    "hide_new_project_button",
    "hide_starter_projects",
    "local_vector_store_available",
    "max_file_size_upload",
    "mcp_base_url",
    "mcp_servers_locked",
    "public_flow_cleanup_interval",
    "public_flow_expiration",
    "serialization_max_items_length",
    "serialization_max_text_length",
    "substitute_outdated_component_code",
    "type",
    "voice_mode_available",
    "webhook_auth_enable",
    "webhook_polling_interval",
}


def test_config_full_for_callers_public_otherwise(make_app):
    client = make_app(auto_saving_interval=2500, webhook_auth_enable=False).test_client()
    public = client.get("/api/v1/config").get_json()
    assert public["type"] == "public"
    assert "auto_saving" not in public and "default_folder_name" not in public
    assert public["max_file_size_upload"] == 1024
    admin = superuser(client)
    full = client.get("/api/v1/config", headers=admin.key).get_json()
    assert set(full) == SPEC_CONFIG_MEMBERS
    assert full["type"] == "full"
    assert full["auto_saving_interval"] == 2500 and full["webhook_auth_enable"] is False
    assert full["default_folder_name"] == "Starter Project"
    # a stale token never hides the public configuration
    stale = client.get("/api/v1/config", headers={"Authorization": "Bearer not-a-token"})
    assert stale.status_code == 200 and stale.get_json()["type"] == "public"


def test_unknown_paths_and_methods(client):
    missing = client.get("/api/v1/does-not-exist")
    assert (missing.status_code, missing.get_json()) == (404, {"detail": "Not Found"})
    wrong = client.delete("/api/v1/version")
    assert wrong.status_code == 405
    assert wrong.get_json() == {"detail": "Method Not Allowed"}
    assert "GET" in wrong.headers["Allow"]


def test_validation_errors_have_the_spec_shape(probe_client):
    bad = probe_client.post("/api/v1/probe/echo", json={"name": 3})
    assert bad.status_code == 422
    detail = bad.get_json()["detail"]
    assert {tuple(d["loc"]) for d in detail} == {("body", "name"), ("body", "count")}
    assert all(set(d) == {"loc", "msg", "type"} for d in detail)
    assert {d["type"] for d in detail} == {"type_error", "missing"}
    malformed = probe_client.post("/api/v1/probe/echo", data="{not json", content_type="application/json")
    assert malformed.status_code == 422
    assert malformed.get_json()["detail"][0]["type"] == "json_invalid"
    good = probe_client.post("/api/v1/probe/echo", json={"name": "x", "count": 2})
    assert good.get_json() == {"name": "x", "count": 2}


def test_unexpected_errors_never_leak_a_traceback(probe_client, caplog):
    response = probe_client.get("/api/v1/probe/boom")
    assert response.status_code == 500
    assert response.get_json() == {"detail": "Internal Server Error"}
    assert b"passwd" not in response.data and b"Traceback" not in response.data
    assert "secret internal detail" in caplog.text  # logged for the operator


def test_cors_wildcard_never_allows_credentials(client):
    headers = {
        "Origin": "https://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, x-api-key",
    }
    preflight = client.options("/api/v1/users/whoami", headers=headers)
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in preflight.headers
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    assert "x-api-key" in preflight.headers["Access-Control-Allow-Headers"].lower()
    simple = client.get("/api/v1/version", headers={"Origin": "https://evil.example"})
    assert simple.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in simple.headers


def test_cors_explicit_origins_allow_credentials_for_them_only(make_app):
    client = make_app(
        cors_origins="https://app.example,https://other.example",
        cors_allow_methods="GET,POST",
        cors_allow_headers="content-type",
    ).test_client()
    ok = client.options(
        "/api/v1/version", headers={"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}
    )
    assert ok.headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert ok.headers["Access-Control-Allow-Credentials"] == "true"
    assert set(ok.headers["Access-Control-Allow-Methods"].split(", ")) == {"GET", "POST"}
    other = client.get("/api/v1/version", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_openapi_document_and_docs_page(client):
    spec = client.get("/openapi.json").get_json()
    assert spec["openapi"].startswith("3.0")
    assert {"OAuth2PasswordBearerCookie", "API key query", "API key header"} <= set(
        spec["components"]["securitySchemes"]
    )
    whoami = spec["paths"]["/api/v1/users/whoami"]["get"]
    assert {"API key header": []} in whoami["security"]
    page = client.get("/docs")
    assert page.status_code == 200 and b"swagger-ui" in page.data
    assert client.get("/docs/static/swagger-ui-bundle.js").status_code == 200


def test_plugins_extend_the_configuration(make_app):
    module = types.ModuleType("extra")

    @hookimpl
    def extend_config(actor, public):
        return {"feature_flags": {"probe": True}} if not public else {"mcp_base_url": "https://mcp.example"}

    module.extend_config = extend_config
    client = make_app(plugins=["accounts", ("extra", module)]).test_client()
    assert client.get("/api/v1/config").get_json()["mcp_base_url"] == "https://mcp.example"
    admin = superuser(client)
    full = client.get("/api/v1/config", headers=admin.key).get_json()
    assert full["feature_flags"] == {"probe": True}
    assert "mcp_base_url" not in full  # a member of the mcp plugin (its settings section), not loaded here


def test_large_json_is_gzipped_only_when_accepted(make_app):
    client = make_app().test_client()
    admin = superuser(client)
    plain = client.get("/openapi.json")
    assert "Content-Encoding" not in plain.headers and plain.get_json()["openapi"]
    zipped = client.get("/openapi.json", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    import gzip
    import json

    assert json.loads(gzip.decompress(zipped.data))["openapi"] == plain.get_json()["openapi"]
    small = client.get("/health", headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in small.headers
    assert admin.key  # the app is fully set up
    # both answers say they depend on the header, whether or not it was sent (caches keep them apart)
    assert "accept-encoding" in plain.headers["Vary"].lower()
    assert "accept-encoding" in zipped.headers["Vary"].lower()


def test_cors_headers_only_for_requests_with_an_origin(client):
    """No ``Origin``, no CORS answer (as the reference's middleware); ``Vary: Origin`` keeps caches apart."""
    plain = client.get("/api/v1/version")
    assert "Access-Control-Allow-Origin" not in plain.headers
    assert "origin" in plain.headers["Vary"].lower()
    cross = client.get("/api/v1/version", headers={"Origin": "https://app.example"})
    assert cross.headers["Access-Control-Allow-Origin"] == "*"
    assert plain.get_json() == cross.get_json()


def test_values_the_database_refuses_are_a_422_and_nothing_is_written(make_app, service_database_url):
    client = make_app().test_client()
    admin = superuser(client)
    response = client.post(
        "/api/v1/variables/", json={"name": "bad\u0000name", "value": "v", "default_fields": []}, headers=admin.key
    )
    if service_database_url is None:  # SQLite stores NUL characters; only PostgreSQL refuses them
        assert response.status_code in (201, 422)
        return
    assert response.status_code == 422
    assert response.get_json()["detail"][0]["type"] == "value_error"
    names = [v["name"] for v in client.get("/api/v1/variables/", headers=admin.key).get_json()]
    assert "bad\u0000name" not in names
    assert client.get("/health").status_code == 200


def test_url_builders_are_compiled_on_first_use_and_build_what_werkzeug_builds():
    """``core.app.LazyBuilderRule``: no builder is compiled as the app is made; the first ``url_for`` of a
    rule compiles its builder, and every URL (path arguments, a default, unknown arguments to the query
    string, a converter's quoting) is the one werkzeug's own rule builds."""
    import flask
    from werkzeug.routing import Map, Rule

    from core.app import LazyBuilderRule

    app = flask.Flask("probe")
    app.url_rule_class = LazyBuilderRule
    app.add_url_rule("/flows/<uuid:flow_id>/runs/<path:rest>", "runs", lambda **kw: "")

    def files(**_kw):
        return ""

    app.add_url_rule("/files/", "files", files, defaults={"name": "index"})
    app.add_url_rule("/files/<name>", "files", files)
    app.add_url_rule("/files/<name>/<int:part>", "parts", lambda **kw: "")
    ours = [rule for rule in app.url_map.iter_rules() if rule.endpoint != "static"]
    assert len(ours) == 4 and all(rule._build.__name__ == "build_on_first_use" for rule in ours)

    plain = Map([Rule(r.rule, endpoint=r.endpoint, defaults=r.defaults) for r in ours]).bind("x")
    cases = [
        ("runs", {"flow_id": "9b2f7c1e-0d4a-4c55-9a51-0b3f3c1d2e4f", "rest": "a b/ü?"}),
        ("runs", {"flow_id": "9b2f7c1e-0d4a-4c55-9a51-0b3f3c1d2e4f", "rest": "x", "page": 2, "q": "a&b"}),
        ("files", {}),
        ("files", {"name": "report 1.pdf"}),
        ("parts", {"name": "a", "part": 3, "download": "true"}),
    ]
    with app.test_request_context():
        for endpoint, values in cases:
            assert flask.url_for(endpoint, **values) == plain.build(endpoint, values)
            assert flask.url_for(endpoint, **values) == plain.build(endpoint, values)  # the compiled builder now
    assert all(rule._build_unknown.__name__ != "build_on_first_use" for rule in ours)
