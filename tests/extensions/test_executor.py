"""The executor-only install in a clean venv: no database driver, the reference fixtures with and without streaming.

A session-scoped fixture creates a venv under the test's tmp directory and installs
``./executor`` and ``./bundles/standard`` with pip (offline: pip's configured local indexes
and cache), as a user would (the test process's pip, pointed at the venv with ``--python``).
Each fixture's answer is compared with the full service's engine run in this process.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from core.engine import RunContext, run_flow
from tests.flowkit import load_reference, reference_path, standard_registry
from tests.jobkit import stop_processes
from tests.serverkit import free_port, wait_healthy

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
FIXTURES = {
    "chat-echo.json": "hello",
    "data-operations-uppercase.json": "hello there",
    "webhook-parser-chat.json": "",
}
KEY = "executor-test-key-0123456789"


@pytest.fixture(scope="session")
def venv(request, tmp_path_factory) -> Path:
    """One venv for the whole run: under xdist the first worker to ask builds it (under a lock) and the others
    reuse it (the tests only run what it holds). Two workers building at once also raced in the bundle's
    source tree (setuptools' ``build/`` directory)."""
    base = tmp_path_factory.getbasetemp()
    run_dir = base.parent if hasattr(request.config, "workerinput") else base  # xdist: the run's, shared
    where = run_dir / "execvenv"
    root = where / "venv"
    with open(run_dir / "execvenv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (where / "built").exists():
            shutil.rmtree(where, ignore_errors=True)  # a worker's failed attempt
            where.mkdir()
            _build_venv(root)
            (where / "built").touch()
    return root


def _build_venv(root: Path) -> None:
    # no pip of its own: this process's pip installs into it (``--python``); ensurepip's copy of pip, compiled on
    # the way in, was most of this fixture's time (about 10 s on a quiet machine, 40 s under load)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    pip = subprocess.run(
        [*venv_pip(root), "install", "-q", str(REPO / "executor"), str(REPO / "bundles" / "standard")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr


def venv_pip(venv: Path) -> list[str]:
    """pip acting on ``venv``'s interpreter and site-packages (pip >= 22.3)."""
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(venv / "bin" / "python")]


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PYTHON"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def exec_cli(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "service-exec"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
        cwd=venv,
    )


def expected(name: str, value: str) -> str:
    """The full service's engine answer for the fixture."""
    result = run_flow(load_reference(name)["data"], standard_registry(), RunContext(), input_value=value)
    assert result.ok, result.error
    answer = result.answer()
    assert answer is not None
    return answer


def answer(body: dict) -> str:
    return body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def test_the_install_has_no_database_accounts_editor_or_redis(venv):
    listed = subprocess.run([*venv_pip(venv), "list", "--format=json"], capture_output=True, text=True, check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"service-executor", "service-bundle-standard"} <= names
    for heavy in ("sqlalchemy", "psycopg", "psycopg2-binary", "alembic", "redis", "rq", "flask-login", "service-core"):
        assert heavy not in names, heavy
    probe = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sys, service_exec.engine, service_exec.cli;"
            "import importlib.util as u; print(u.find_spec('core.app') is None, "
            "sorted(m for m in sys.modules if m.split('.')[0] in ('flask', 'werkzeug', 'gevent')))",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=venv,
        check=True,
    )
    assert probe.stdout.strip() == "True []"  # the web service is not there; run imports no web framework


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_run_prints_the_reference_fixture_answer(venv, name):
    value = FIXTURES[name]
    done = exec_cli(venv, "run", str(reference_path(name)), "--input", value)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert answer(body) == expected(name, value)
    assert body["outputs"][0]["inputs"] == {"input_value": value}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_run_streams_the_reference_fixture(venv, name):
    value = FIXTURES[name]
    done = exec_cli(venv, "run", str(reference_path(name)), "--input", value, "--stream")
    assert done.returncode == 0, done.stderr
    frames = [json.loads(part) for part in done.stdout.split("\n\n") if part.strip()]
    assert frames[-1]["event"] == "end"
    assert answer(frames[-1]["data"]["result"]) == expected(name, value)
    assert {f["event"] for f in frames[:-1]} <= {"add_message", "token"}
    assert any(f["event"] == "add_message" for f in frames)


def test_run_applies_tweaks_and_reports_bad_input(venv):
    flow = str(reference_path("chat-echo.json"))
    done = exec_cli(
        venv, "run", flow, "--input", "ignored", "--tweaks", json.dumps({"ChatOutput-BBBBB": {"sender_name": "Bot"}})
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["outputs"][0]["outputs"][0]["results"]["message"]["data"]["sender_name"] == "Bot"
    assert exec_cli(venv, "run", flow, "--tweaks", "[1]").returncode == 2
    assert exec_cli(venv, "run", flow, "--tweaks", "{nope").returncode == 2
    missing = exec_cli(venv, "run", str(REPO / "no-such-flow.json"))
    assert missing.returncode == 2 and "no-such-flow.json" in missing.stderr


@pytest.fixture
def served(venv, tmp_path):
    port = free_port()
    env = {**clean_env(), "SERVICE_EXEC_API_KEY": KEY}
    log = open(tmp_path / "serve.log", "w")  # noqa: SIM115 - the child keeps its copy
    flows = [str(reference_path(n)) for n in sorted(FIXTURES)]
    proc = subprocess.Popen(
        [str(venv / "bin" / "service-exec"), "serve", *flows, "--port", str(port), "--workers", "2"],
        env=env,
        cwd=venv,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, proc, lambda: (tmp_path / "serve.log").read_text())
    try:
        yield base
    finally:
        stop_processes([proc], timeout=15)


def flow_ids(venv) -> dict[str, str]:
    code = (
        "import json, sys; from service_exec.engine import read_flow;"
        "print(json.dumps({p: read_flow(p).id for p in sys.argv[1:]}))"
    )
    paths = [str(reference_path(n)) for n in sorted(FIXTURES)]
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code, *paths],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=venv,
        check=True,
    )
    by_path = json.loads(out.stdout)
    return {Path(p).name: i for p, i in by_path.items()}


def test_serve_answers_the_simplified_run_and_v2_workflows_statelessly(venv, served):
    ids = flow_ids(venv)
    key = {"x-api-key": KEY}
    echo = ids["chat-echo.json"]
    assert requests.post(f"{served}/api/v1/run/{echo}", json={"input_value": "hi"}, timeout=30).status_code == 403
    wrong = requests.post(f"{served}/api/v1/run/{echo}", json={}, headers={"x-api-key": "nope"}, timeout=30)
    assert wrong.status_code == 403 and wrong.json() == {"detail": "Invalid API key"}
    for name, value in FIXTURES.items():
        response = requests.post(
            f"{served}/api/v1/run/{ids[name]}", json={"input_value": value}, headers=key, timeout=30
        )
        assert response.status_code == 200, response.text
        assert answer(response.json()) == expected(name, value)
        # by name too (the export's endpoint name or name)
    by_name = requests.post(f"{served}/api/v1/run/chat-echo", json={"input_value": "n"}, headers=key, timeout=30)
    assert answer(by_name.json()) == "n"

    streamed = requests.post(
        f"{served}/api/v1/run/{echo}?stream=true", json={"input_value": "s"}, headers=key, timeout=30
    )
    frames = [json.loads(p) for p in streamed.text.split("\n\n") if p.strip()]
    assert frames[-1]["event"] == "end" and answer(frames[-1]["data"]["result"]) == "s"

    sync = requests.post(
        f"{served}/api/v2/workflows", json={"flow_id": echo, "input_value": "v2"}, headers=key, timeout=30
    )
    assert sync.status_code == 200, sync.text
    body = sync.json()
    assert body["status"] == "completed" and body["object"] == "response"
    assert body["output"] == {"reason": "single", "text": "v2", "source": "ChatOutput-BBBBB"}
    assert body["outputs"]["ChatOutput-BBBBB"]["metadata"] == {"component_type": "ChatOutput"}

    stream = requests.post(
        f"{served}/api/v2/workflows",
        json={"flow_id": echo, "input_value": "sse", "mode": "stream"},
        headers=key,
        timeout=30,
    )
    assert stream.headers["content-type"].startswith("text/event-stream")
    events = []
    for seq, chunk in enumerate(c for c in stream.text.split("\n\n") if c.strip()):
        data_line, id_line = chunk.split("\n")
        assert id_line == f"id: {seq}"
        events.append(json.loads(data_line.removeprefix("data: ")))
    names = [e["event"] for e in events]
    assert names[0] == "vertices_sorted" and names[-1] == "end"
    assert [e["data"]["content"] for e in events if e["event"] == "output"] == ["sse"]

    missing = requests.post(f"{served}/api/v2/workflows", json={"flow_id": "nope"}, headers=key, timeout=30)
    assert missing.status_code == 404 and missing.json()["detail"]["code"] == "FLOW_NOT_FOUND"
    for bad in ({"flow_id": echo, "mode": "background"}, {"flow_id": echo, "extra": 1}, {"flow_id": echo, "tweaks": 3}):
        assert requests.post(f"{served}/api/v2/workflows", json=bad, headers=key, timeout=30).status_code == 422
    agui = requests.post(
        f"{served}/api/v2/workflows", json={"flow_id": echo, "stream_protocol": "x"}, headers=key, timeout=30
    )
    assert agui.status_code == 422 and agui.json()["detail"]["code"] == "UNKNOWN_STREAM_PROTOCOL"
    bad_tweak = requests.post(
        f"{served}/api/v1/run/{echo}",
        json={"input_value": "x", "tweaks": [1]},
        headers=key,
        timeout=30,
    )
    assert bad_tweak.status_code == 422 and isinstance(bad_tweak.json()["detail"], list)
