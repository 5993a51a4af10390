"""Every operation of /openapi.json documents its body, its success schema and its error responses."""

from __future__ import annotations

import pytest

WRITE = ("post", "put", "patch")
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    from core.app import create_app

    config = {"config_dir": tmp_path_factory.mktemp("cfg"), "rate_limit_storage_uri": "memory://"}
    app = create_app(config=config)
    return app.test_client().get("/openapi.json").get_json()


def _operations(spec):
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method], item.get("parameters", [])


def _resolve(spec, response):
    if "$ref" in response:
        return spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    return response


def _schema(spec, response):
    content = _resolve(spec, response).get("content", {})
    schema = next(iter(content.values()), {}).get("schema", {})
    if "$ref" in schema:
        return spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_operation_is_complete(spec):
    problems = []
    operations = list(_operations(spec))
    assert len(operations) > 60
    for path, method, op, path_params in operations:
        name = f"{method.upper()} {path}"
        responses = op.get("responses", {})
        success = [code for code in responses if code.startswith("2")]
        if not success:
            problems.append(f"{name}: no success response")
        for code in success:
            if code != "204" and not _schema(spec, responses[code]):
                problems.append(f"{name}: {code} has no schema")
        if method in WRITE and "requestBody" not in op:
            problems.append(f"{name}: no request body documented")
        secured = any(requirement for requirement in op.get("security", []))
        wanted = (["401", "403"] if secured else []) + (["404"] if "{" in path else [])
        if "requestBody" in op or op.get("parameters") or path_params:
            wanted.append("422")
        for code in wanted:
            if code not in responses:
                problems.append(f"{name}: no {code} response")
            elif "detail" not in _schema(spec, responses[code]).get("properties", {}):
                problems.append(f"{name}: {code} is not the {{detail}} shape")
    assert not problems, "\n".join(problems)


def test_validation_errors_document_their_items(spec):
    schema = _schema(spec, {"$ref": "#/components/responses/UNPROCESSABLE_ENTITY"})
    items = schema["properties"]["detail"]
    assert items["type"] == "array"
    item = items["items"]
    if "$ref" in item:
        item = spec["components"]["schemas"][item["$ref"].rsplit("/", 1)[1]]
    assert set(item["properties"]) == {"loc", "msg", "type"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/v1/refresh"),
        ("post", "/api/v1/logout"),
        ("post", "/api/v1/build/{job_id}/cancel"),
        ("post", "/api/v1/build_public_tmp/{job_id}/cancel"),
        ("post", "/api/v1/flows/download/"),
        ("post", "/api/v1/projects/upload/"),
        ("post", "/api/v1/flows/upload/"),
        ("delete", "/api/v1/flows/"),
    ],
)
def test_the_formerly_undocumented_bodies(spec, method, path):
    body = spec["paths"][path][method]["requestBody"]
    assert body["content"] and body.get("description")


#: operations that cannot fail with a documented error, each with the reason (issue 27: every other
#: operation documents at least one 4xx/5xx response, so a client knows what an error looks like)
NO_ERROR_RESPONSE: dict[str, str] = {
    "GET /health": "liveness: it answers whenever the process does (readiness failures are /health_check's 500)",
    "GET /api/v1/version": "constant package metadata, read at start-up",
    "GET /api/v1/config": "settings held in memory; a stale or wrong credential reads as anonymous, not as an error",
    "GET /api/v1/sso/providers": "settings held in memory, public (the sign-in page's provider buttons)",
}


def test_every_operation_documents_an_error_response(spec):
    bare = []
    for path, method, op, _params in _operations(spec):
        name = f"{method.upper()} {path}"
        codes = [code for code in op.get("responses", {}) if code[:1] in ("4", "5")]
        if not codes and name not in NO_ERROR_RESPONSE:
            bare.append(name)
    assert bare == [], "operations documenting no 4xx/5xx response:\n" + "\n".join(bare)
    stale = [name for name in NO_ERROR_RESPONSE if name.split(" ", 1)[1] not in spec["paths"]]
    assert stale == []
