"""An agent's approval on RQ: the run pauses in a worker process, the answer resumes it in a worker."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
import redis

from core import runs
from core.app import state
from core.jobs import JobState
from core.runs.jobs import enqueue, resume
from tests.build.buildkit import child_env, create_flow
from tests.build.conftest import REDIS_URL, cleanup_redis, redis_or_skip, use_queue, wait_workers
from tests.conftest import make_user, superuser
from tests.jobkit import stop_processes
from tests.models.test_app_models import PLUGINS, _approval_flow, _wait_end


@pytest.fixture
def rq_app(make_app, llm, tmp_path, service_database_url, monkeypatch):
    redis_or_skip()
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    tag = f"m{uuid.uuid4().hex[:8]}"
    database_url = service_database_url or f"sqlite:///{tmp_path / 'service.db'}"
    app = make_app(
        plugins=PLUGINS, job_backend="rq", redis_url=REDIS_URL, config_dir=tmp_path, database_url=database_url
    )
    env = child_env(
        tmp_path,
        SERVICE_PLUGINS=",".join(PLUGINS),
        SERVICE_REDIS_URL=REDIS_URL,
        SERVICE_JOB_BACKEND="rq",
        SERVICE_DATABASE_URL=database_url,
        SERVICE_SSRF_ALLOWED_HOSTS="127.0.0.1",
        OPENAI_COMPATIBLE_BASE_URL=llm.url,
    )
    args = [sys.executable, "-m", "core.cli", "worker", "--queue", tag, "--name", f"{tag}-w", "--simple"]
    with open(tmp_path / "worker.log", "w") as log:
        procs = [subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)]
    try:
        wait_workers(redis.Redis.from_url(REDIS_URL), [tag], procs, tmp_path)
        yield use_queue(app, tag)
    finally:
        stop_processes(procs)
        cleanup_redis([tag])


def test_agent_approval_pauses_and_resumes_on_rq_workers(rq_app, llm):
    client = rq_app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    bob = make_user(client, superuser(client), username="bob")
    flow_id = create_flow(client, alice, _approval_flow())
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    with rq_app.app_context():
        job_id = enqueue(runs.RunRequest(flow=flow_id, user_id=alice.id, surface="test", inputs=[runs.RunInput("go")]))
    info = _wait_end(rq_app, job_id, alice.id)
    assert info.state is JobState.SUSPENDED, info.error
    request_id = [e.data for e in state(rq_app).jobs.read_events(job_id)][-1]["request_id"]
    from core.errors import ApiError

    with rq_app.app_context():
        with pytest.raises(ApiError) as foreign:
            resume(request_id, bob.id, {"action_id": "approve"})
        assert foreign.value.status == 404
        llm.reply("approved and sent")
        resumed = resume(request_id, alice.id, {"action_id": "approve"})
    done = _wait_end(rq_app, resumed, alice.id)
    assert done.state is JobState.FINISHED, done.error
    assert done.result["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "approved and sent"
    assert [m["content"] for m in llm.chat_requests[-1]["messages"] if m["role"] == "tool"] == ["hello"]
