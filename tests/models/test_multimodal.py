"""Files attached to a chat input reach the model (issue 27, #4): images as OpenAI ``image_url`` parts
(base64 data URLs), text files as text parts, read from the caller's stored files only.

The request bodies are those the local OpenAI-protocol server (``tests/openai_server.py``) received."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import pytest

from tests.build.buildkit import create_flow
from tests.conftest import make_user, superuser
from tests.models.test_agent_engine import agent_flow
from tests.models.test_app_models import echo_flow

PLUGINS = ["accounts", "flows", "build", "run", "variables", "files", "standard", "models"]


def png(width: int = 2, height: int = 1) -> bytes:
    """A real (tiny) PNG, made here: signature, IHDR, IDAT, IEND."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.fixture
def env(make_app, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    monkeypatch.setenv("SERVICE_RESTRICT_LOCAL_FILE_ACCESS", "true")
    app = make_app(plugins=PLUGINS)
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    return client, alice, bob


def v1_upload(client, caller, flow_id: str, content: bytes, name: str) -> str:
    response = client.post(
        f"/api/v1/files/upload/{flow_id}", data={"file": (io.BytesIO(content), name)}, headers=caller.bearer
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["file_path"]


def v2_upload(client, caller, content: bytes, name: str) -> str:
    response = client.post(
        "/api/v2/files",
        data={"file": (io.BytesIO(content), name)},
        headers=caller.bearer,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["path"]


def run(client, caller, flow_id: str, files: list[str], text: str = "What is in this picture?"):
    return client.post(
        f"/api/v1/run/{flow_id}",
        json={"input_value": text, "tweaks": {"ChatInput-1": {"files": files}}},
        headers=caller.key,
    )


def user_content(llm) -> list | str:
    return [m for m in llm.chat_requests[-1]["messages"] if m["role"] == "user"][-1]["content"]


def image_urls(content) -> list[str]:
    assert isinstance(content, list), content
    return [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]


def test_v1_upload_and_files_tweak_send_an_image_url_part(env, llm):
    client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    image = png()
    path = v1_upload(client, alice, flow_id, image, "red.png")
    response = run(client, alice, flow_id, [path])
    assert response.status_code == 200, response.get_json()
    content = user_content(llm)
    assert content[0] == {"type": "text", "text": "What is in this picture?"}
    assert image_urls(content) == ["data:image/png;base64," + base64.b64encode(image).decode()]


def test_v2_file_by_path_sends_an_image_url_part_and_text_files_as_text(env, llm):
    client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    image = png(3, 2)
    # a misleading extension: the type comes from the content
    image_path = v2_upload(client, alice, image, "photo.jpg")
    notes_path = v2_upload(client, alice, b"the meeting is at noon", "notes.txt")
    response = run(client, alice, flow_id, [image_path, notes_path])
    assert response.status_code == 200, response.get_json()
    content = user_content(llm)
    assert image_urls(content) == ["data:image/png;base64," + base64.b64encode(image).decode()]
    texts = [p["text"] for p in content if p["type"] == "text"]
    assert texts[0] == "What is in this picture?"
    assert any("notes.txt" in t and "the meeting is at noon" in t for t in texts[1:])


def test_the_agent_sends_the_image_too(env, llm):
    client, alice, _bob = env
    flow_id = create_flow(client, alice, agent_flow())
    image = png()
    path = v2_upload(client, alice, image, "red.png")
    response = run(client, alice, flow_id, [path])
    assert response.status_code == 200, response.get_json()
    assert image_urls(user_content(llm)) == ["data:image/png;base64," + base64.b64encode(image).decode()]


def test_another_users_file_never_reaches_the_model(env, llm):
    client, alice, bob = env
    flow_id = create_flow(client, alice, echo_flow())
    bobs = v2_upload(client, bob, png(), "bob.png")
    response = run(client, alice, flow_id, [bobs])
    assert response.status_code != 200
    assert "bob.png" in str(response.get_json()) and "not found" in str(response.get_json()).lower()
    assert all("image_url" not in str(body) for body in llm.chat_requests)


def test_a_host_path_is_not_read(env, llm, tmp_path):
    client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    secret = tmp_path / "secret.png"
    secret.write_bytes(png())
    response = run(client, alice, flow_id, [str(secret)])
    assert response.status_code != 200
    assert all("image_url" not in str(body) for body in llm.chat_requests)


def test_an_image_over_the_cap_is_refused_with_a_clear_error(env, llm, monkeypatch):
    from service_bundle_models import attachments

    monkeypatch.setattr(attachments, "MAX_IMAGE_BYTES", 100)
    client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    path = v2_upload(client, alice, png(64, 64) + b"\x00" * 200, "big.png")
    response = run(client, alice, flow_id, [path])
    assert response.status_code != 200
    body = str(response.get_json())
    assert "big.png" in body and "larger than" in body
    assert llm.chat_requests == []


def test_a_binary_file_that_is_no_image_is_refused(env, llm):
    client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    path = v2_upload(client, alice, b"\x00\x01\x02\xff" * 10, "blob.bin")
    response = run(client, alice, flow_id, [path])
    assert response.status_code != 200
    assert "blob.bin" in str(response.get_json())


def test_without_files_the_content_stays_a_string(env, llm):
    client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "plain"}, headers=alice.key)
    assert response.status_code == 200
    assert user_content(llm) == "plain"
