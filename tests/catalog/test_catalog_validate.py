"""GET /api/v1/all, POST /api/v1/validate/code and /api/v1/validate/prompt."""

from __future__ import annotations

import gzip
import json
import uuid

import pytest

from core.app import state


# --- catalog ------------------------------------------------------------------------------------------
def test_catalog_shape_and_gzip(app, client, alice):
    plain = client.get("/api/v1/all", headers=alice.key)
    assert plain.status_code == 200 and plain.headers.get("Content-Encoding") is None
    body = plain.get_json()
    names = body.pop("component_display_names")
    keys = {key for category in body.values() for key in category}
    assert {"ChatInput", "ChatOutput", "Webhook", "Operations", "ParserComponent"} <= keys
    assert set(names) == set(state(app).components.current.keys())
    chat_input = body["input_output"]["ChatInput"]
    assert chat_input["display_name"] == "Chat Input" and "input_value" in chat_input["template"]
    assert "code" not in chat_input["template"]
    packed = client.get("/api/v1/all", headers={**alice.key, "Accept-Encoding": "gzip, deflate"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert json.loads(gzip.decompress(packed.get_data())) == plain.get_json()
    assert len(packed.get_data()) < len(plain.get_data()) / 4


@pytest.mark.parametrize(
    ("header", "expected", "language"),
    [
        ("fr-FR,fr;q=0.9,en;q=0.5", "Entrée de chat", "fr"),
        ("de", "Chat-Eingabe", "de"),
        ("es-ES", "Entrada de chat", "es"),
        ("ja, en;q=0.1", "Chat Input", "en"),
        ("", "Chat Input", "en"),
    ],
)
def test_catalog_locale(client, alice, header, expected, language):
    response = client.get("/api/v1/all", headers={**alice.key, "Accept-Language": header})
    body = response.get_json()
    assert body["input_output"]["ChatInput"]["display_name"] == expected
    assert body["component_display_names"]["ChatInput"] == expected
    assert response.headers["Content-Language"] == language


def test_catalog_auth_and_include_blocked(client, admin, alice):
    assert client.get("/api/v1/all").status_code == 403
    assert client.get("/api/v1/all", headers=alice.bearer).status_code == 200
    refused = client.get("/api/v1/all?include_blocked=true", headers=alice.key)
    assert refused.status_code == 403
    assert client.get("/api/v1/all?include_blocked=false", headers=alice.key).status_code == 200
    assert client.get("/api/v1/all?include_blocked=true", headers=admin.key).status_code == 200
    assert client.get("/api/v1/all?include_blocked=perhaps", headers=admin.key).status_code == 422


# --- validate/code ------------------------------------------------------------------------------------------
def _code(client, caller, code):
    response = client.post("/api/v1/validate/code", json={"code": code}, headers=caller.key)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_valid_code(client, alice):
    code = "import json\nfrom os import path\nimport collections.abc\n\ndef f(x):\n    return json.dumps(x)\n"
    assert _code(client, alice, code) == {"imports": {"errors": []}, "function": {"errors": []}}


def test_syntax_errors_land_in_function_errors(client, alice):
    out = _code(client, alice, "def f(:\n    pass")
    assert out["imports"] == {"errors": []}
    [error] = out["function"]["errors"]
    assert "line 1" in error


def test_unknown_imports(client, alice):
    out = _code(
        client, alice, "import surely_not_a_module_xyz\nfrom another_missing_pkg.sub import thing\nimport json\n"
    )
    assert out["imports"]["errors"] == [
        "No module named 'surely_not_a_module_xyz'",
        "No module named 'another_missing_pkg'",
    ]
    assert out["function"]["errors"] == []


def test_code_is_never_executed_or_imported(client, alice, tmp_path):
    marker = tmp_path / f"ran-{uuid.uuid4().hex}"
    module = tmp_path / "evil_module_for_validation.py"
    module.write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        code = (
            f"open({str(marker)!r}, 'w').write('top level')\n"
            f"import evil_module_for_validation\n"
            f"def f(x=open({str(marker)!r}, 'w')):\n    return x\n"
            f"class C:\n    open({str(marker)!r}, 'w')\n"
        )
        out = _code(client, alice, code)
    finally:
        sys.path.remove(str(tmp_path))
    assert out == {"imports": {"errors": []}, "function": {"errors": []}}  # found on sys.path, not imported
    assert not marker.exists()
    assert "evil_module_for_validation" not in sys.modules


def test_validate_code_needs_a_user_and_a_code_string(client, alice):
    assert client.post("/api/v1/validate/code", json={"code": "x = 1"}).status_code == 403
    assert client.post("/api/v1/validate/code", json={}, headers=alice.key).status_code == 422
    assert client.post("/api/v1/validate/code", json={"code": 3}, headers=alice.key).status_code == 422


# --- validate/prompt ---------------------------------------------------------------------------------------
def _prompt_node(client, caller):
    catalog = client.get("/api/v1/all", headers=caller.key).get_json()
    return catalog["models_and_agents"]["Prompt Template"]


def test_prompt_without_frontend_node(client, alice):
    response = client.post(
        "/api/v1/validate/prompt", json={"name": "template", "template": "Hi {name}"}, headers=alice.key
    )
    assert response.status_code == 200
    assert response.get_json() == {"input_variables": [], "frontend_node": None}


def test_prompt_adds_and_removes_variable_fields(client, alice):
    node = _prompt_node(client, alice)
    first = client.post(
        "/api/v1/validate/prompt",
        headers=alice.key,
        json={"name": "template", "template": "Hello {name}, about {topic}. {{literal}}", "frontend_node": node},
    )
    assert first.status_code == 200, first.get_json()
    out = first.get_json()
    assert out["input_variables"] == ["name", "topic"]
    template = out["frontend_node"]["template"]
    for var in ("name", "topic"):
        assert template[var]["name"] == var and template[var]["display_name"] == var
        assert template[var]["input_types"] == ["Message"] and template[var]["value"] == ""
    assert out["frontend_node"]["custom_fields"] == {"template": ["name", "topic"]}
    # a value typed into a kept field survives; a variable that left the template loses its field
    node2 = out["frontend_node"]
    node2["template"]["name"]["value"] = "Ada"
    second = client.post(
        "/api/v1/validate/prompt",
        headers=alice.key,
        json={"name": "template", "template": "Bye {name}", "frontend_node": node2},
    ).get_json()
    assert second["input_variables"] == ["name"]
    assert second["frontend_node"]["template"]["name"]["value"] == "Ada"
    assert "topic" not in second["frontend_node"]["template"]
    assert second["frontend_node"]["custom_fields"] == {"template": ["name"]}


def test_prompt_mustache_and_invalid_names(client, alice):
    node = _prompt_node(client, alice)
    mustache = client.post(
        "/api/v1/validate/prompt",
        headers=alice.key,
        json={"name": "template", "template": "Hi {{ who }} {not_this}", "frontend_node": node, "mustache": True},
    )
    assert mustache.get_json()["input_variables"] == ["who"]
    bad = client.post(
        "/api/v1/validate/prompt",
        headers=alice.key,
        json={"name": "template", "template": "Hi {two words}", "frontend_node": node},
    )
    assert bad.status_code == 400 and "two words" in bad.get_json()["detail"]
    reserved = client.post(
        "/api/v1/validate/prompt",
        headers=alice.key,
        json={"name": "template", "template": "{code}", "frontend_node": node},
    )
    assert reserved.status_code == 400


def test_prompt_frontend_node_must_be_a_full_node(client, alice):
    response = client.post(
        "/api/v1/validate/prompt",
        headers=alice.key,
        json={"name": "template", "template": "{x}", "frontend_node": {"display_name": "half"}},
    )
    assert response.status_code == 422
    assert {tuple(item["loc"]) for item in response.get_json()["detail"]} >= {
        ("body", "frontend_node", "template"),
        ("body", "frontend_node", "base_classes"),
    }
    assert client.post("/api/v1/validate/prompt", json={"name": "t", "template": "x"}).status_code == 403
