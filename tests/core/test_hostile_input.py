"""Issue 20, points 2 and 3: request body limits, and hostile JSON answered 422 (never 500).

Body limits are enforced before the body is read and before authentication:
too large a ``Content-Length`` is refused at once; a chunked body is read
through a bounded stream. Hostile JSON (deep nesting, huge integers, lone
surrogates, NaN) is refused by the one parsing path every request goes through.
"""

from __future__ import annotations

import json
import os
import select
import socket
import urllib.request
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import superuser

MB = 1024 * 1024
REPO = Path(__file__).resolve().parents[2]
HOSTILE = {
    "deep": "[" * 2000 + "]" * 2000,
    "deep_objects": '{"a":' * 1500 + "1" + "}" * 1500,
    "big_int": "9" * 5000,
    "lone_surrogate": '"\\ud800"',
    "lone_low_surrogate": '{"k": "x\\udc00y"}',
    "nan": '{"n": NaN}',
    "infinity": "[Infinity]",
    "huge_float": "1e999999",
}


@pytest.fixture
def app(make_app):
    return make_app(plugins=["accounts", "flows", "variables", "run"], rate_limit_enabled=False)


# --- body limits ---------------------------------------------------------------------------------------
def test_json_bodies_over_the_limit_are_413_before_authentication(app):
    client = app.test_client()
    admin = superuser(client)
    big = b'{"name": "big", "description": "' + b"x" * (3 * MB) + b'"}'
    anonymous = client.post("/api/v1/users/", data=big, content_type="application/json")
    assert anonymous.status_code == 413 and "too large" in anonymous.get_json()["detail"]
    # no credentials at all: still 413 (the size is checked before any authentication work)
    assert client.post("/api/v1/api_key/", data=big, content_type="application/json").status_code == 413
    signed_in = client.post("/api/v1/variables/", data=big, content_type="application/json", headers=admin.bearer)
    assert signed_in.status_code == 413
    # flows take larger bodies: 3 MB of flow is fine
    flow = client.post("/api/v1/flows/", data=big, content_type="application/json", headers=admin.bearer)
    assert flow.status_code == 201, flow.get_data(as_text=True)[:300]


def test_limits_follow_the_settings(make_app):
    app = make_app(plugins=["accounts", "flows"], max_json_body_size=1, max_flow_body_size=2)
    client = app.test_client()
    admin = superuser(client)
    body = b'{"name": "big", "description": "' + b"x" * (int(1.5 * MB)) + b'"}'
    assert client.post("/api/v1/users/", data=body, content_type="application/json").status_code == 413
    ok = client.post("/api/v1/flows/", data=body, content_type="application/json", headers=admin.bearer)
    assert ok.status_code == 201
    body = b'{"name": "' + b"x" * (3 * MB) + b'"}'
    assert (
        client.post("/api/v1/flows/", data=body, content_type="application/json", headers=admin.bearer).status_code
        == 413
    )


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


_SERVER = """
import sys
from werkzeug.serving import make_server
from core.app import create_app
app = create_app(config={"config_dir": sys.argv[1], "rate_limit_storage_uri": "memory://", "log_level": "warning"},
                 plugins=["accounts", "flows", "variables", "run"])
server = make_server("127.0.0.1", 0, app, threaded=True)
print(server.server_port, flush=True)
server.serve_forever()
"""


def _send(port: int, head: bytes, chunks: int, chunk: bytes, chunked: bool) -> bytes:
    """Send ``head``, then body pieces until the server answers (or ``chunks`` were sent); the answer's head."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        try:
            for _ in range(chunks):
                if select.select([sock], [], [], 0)[0]:
                    break  # answered before reading the body
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            else:
                if chunked:
                    sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed: expected
        data = b""
        while b"\r\n\r\n" not in data:
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
        return data


def test_huge_bodies_cost_no_memory(tmp_path):
    """150 MB posted (with Content-Length, and chunked), anonymously or not, keep < 10 MB in the server process."""
    import subprocess
    import sys

    # big allocations always mmapped (no adaptive threshold): RSS then shows what is kept, not allocator caching
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072", "SERVICE_ENV_FILE": os.devnull}
    env = {k: v for k, v in env.items() if not k.startswith("SERVICE_") or k == "SERVICE_ENV_FILE"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(tmp_path)], env=env, stdout=subprocess.PIPE, cwd=REPO, text=True
    )
    try:
        port = int(proc.stdout.readline())
        chunk = b"x" * MB
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/auto_login", timeout=30) as answer:
            token = json.loads(answer.read())["access_token"]

        def post_all(size: int) -> None:
            for path, auth in (("/api/v1/users/", ""), ("/api/v1/flows/", f"Bearer {token}"), ("/api/v1/login", "")):
                for chunked in (False, True):
                    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size * MB}"
                    auth_line = f"Authorization: {auth}\r\n" if auth else ""
                    head = (
                        f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                        f"{auth_line}{length}\r\n\r\n"
                    ).encode()
                    reply = _send(port, head, size, chunk, chunked=chunked)
                    assert reply.startswith(b"HTTP/1.1 413"), (path, chunked, reply[:300])

        post_all(40)  # warm-up: threads, imports
        before = _rss_kib(proc.pid)
        post_all(150)
        grown = (_rss_kib(proc.pid) - before) / 1024
        assert grown < 10, f"RSS grew by {grown:.1f} MB"
    finally:
        proc.terminate()
        proc.wait(10)


# --- hostile JSON ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_json_is_422_naming_the_problem(app, kind):
    client = app.test_client()
    admin = superuser(client)
    document = HOSTILE[kind]
    for path, body in (
        ("/api/v1/flows/", f'{{"name": "x", "data": {{"v": {document}}}}}'),
        ("/api/v1/users/", document),  # anonymous
        ("/api/v1/run/00000000-0000-0000-0000-000000000000", document),  # any content type, parsed by the plugin
    ):
        response = client.post(path, data=body, content_type="application/json", headers=admin.bearer)
        assert response.status_code == 422, (path, response.status_code, response.get_data(as_text=True)[:300])
        item = response.get_json()["detail"][0]
        assert item["loc"][0] == "body" and item["type"].startswith("json_"), item


def test_limits_in_the_messages():
    from core.errors import ValidationFailed
    from core.requests import parse_json

    with pytest.raises(ValidationFailed) as deep:
        parse_json(b"[" * 200 + b"]" * 200, max_depth=100)
    assert "deeper than 100" in deep.value.detail[0]["msg"]
    with pytest.raises(ValidationFailed) as big:
        parse_json(b"1" + b"0" * 100, max_int_digits=64)
    assert "64 digits" in big.value.detail[0]["msg"]
    with pytest.raises(ValidationFailed) as lone:
        parse_json(b'{"a": ["ok", "\\ud800"]}')
    assert lone.value.detail[0]["type"] == "json_invalid_unicode" and "a.1" in lone.value.detail[0]["msg"]
    with pytest.raises(ValidationFailed) as bom:
        parse_json("\ufeff{}")  # a BOM in text (bytes may carry one: they are read as utf-8-sig)
    assert bom.value.detail[0]["type"] == "json_invalid" and "BOM" in bom.value.detail[0]["msg"]
    assert parse_json(b"\xef\xbb\xbf[1]") == [1]
    # limits differ per call: each digits limit has its own decoder, built once
    assert parse_json(b"12345", max_int_digits=5) == 12345
    with pytest.raises(ValidationFailed):
        parse_json(b"12345", max_int_digits=4)
    assert parse_json(b'{"ok": "\\ud83d\\ude00", "n": -12, "f": 1.5e3, "deep": [[[[1]]]]}') == {
        "ok": "\U0001f600",
        "n": -12,
        "f": 1500.0,
        "deep": [[[[1]]]],
    }


json_text = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
).map(json.dumps)
noise = st.sampled_from(["[", "]", "{", "}", '"', "\\ud800", "\\udfff", "9" * 5000, "NaN", "-", "1e9999", ",", ":"])


@given(
    st.one_of(
        json_text,
        st.lists(st.one_of(noise, st.text(max_size=5)), max_size=40).map("".join),
        st.tuples(json_text, st.integers(0, 50), noise).map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :]),
        st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
        st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
    )
)
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_fuzzed_json_bodies_never_cause_a_server_error(fuzz_app, document):
    client, headers = fuzz_app
    for path in ("/api/v1/flows/", "/api/v1/users/", "/api/v1/variables/"):
        response = client.post(
            path, data=document.encode("utf-8", "surrogatepass"), content_type="application/json", headers=headers
        )
        assert response.status_code < 500, (path, document[:200], response.get_data(as_text=True)[:300])


@pytest.fixture
def fuzz_app(app):
    client = app.test_client()
    return client, superuser(client).bearer
