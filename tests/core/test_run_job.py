"""The one run job: named result shapers, the names surfaces show, and jobs queued by an older version."""

from __future__ import annotations

from typing import Any

import pytest

from core import hookimpl, runs
from core.app import state
from core.jobs import JobState
from core.plugins import PluginError
from core.runs import jobs as run_jobs
from core.runs import resumes
from core.runs.shapers import RunShaper, ShapedRun, UnknownShaper, V1RunShaper, shaper, shapers
from tests.build.buildkit import app_plugins, chain, create_flow, failing_flow, wait_for
from tests.conftest import superuser

SURFACES = ["run", "workflows"]


class Echoes(RunShaper):
    """A test shaper: keeps ``end`` events only, writes a closing event, returns what it saw."""

    name = "test.echoes"

    def keep(self, event: Any) -> bool:
        return event.name == "end"

    def closing_events(self, run: ShapedRun) -> list[tuple[str, Any]]:
        return [("closing", {"status": run.done.status})]

    def result(self, run: ShapedRun) -> Any:
        return {"status": run.done.status, "args": run.args, "job": run.job_id, "resumed": run.resumed}


class ShaperPlugin:
    @hookimpl
    def register_run_shapers(self):
        return [Echoes()]


def _app(make_app: Any, *extra: Any) -> Any:
    return make_app(plugins=[*app_plugins(), *SURFACES, *extra])


def _done(app: Any, job_id: str) -> Any:
    return wait_for(lambda: (i := state(app).jobs.info(job_id)) is not None and i.state.terminal and i)


def _names(app: Any, job_id: str) -> list[str]:
    return [e.name for e in state(app).jobs.read_events(job_id)]


def _request(flow_id: str, owner: str, text: str = "hi") -> runs.RunRequest:
    return runs.RunRequest(flow=flow_id, user_id=owner, surface="test", inputs=[runs.RunInput(text)])


def test_every_surface_shaper_is_registered_by_name(make_app):
    app = _app(make_app)
    with app.app_context():
        found = shapers(app)
        assert {"v1.run", "v1.webhook", "build.events", "v2.workflow"} <= set(found)
        assert isinstance(found["v1.run"], V1RunShaper)
        with pytest.raises(UnknownShaper):
            shaper(app, "no.such")
    # the job names surfaces show are the one run job
    registry = state(app).job_registry
    jobs = ["runs.flow", "runs.resume", "run.webhook", "build.flow", "workflows.run", "workflows.resume"]
    assert {type(registry[name].func) for name in jobs} == {run_jobs.RunJob}


def test_a_duplicate_shaper_name_is_refused(make_app):
    class Twice:
        @hookimpl
        def register_run_shapers(self):
            return [V1RunShaper()]

    app = _app(make_app, ("twice", Twice()))
    with app.app_context(), pytest.raises(PluginError, match=r"v1\.run"):
        shapers(app)


def test_the_run_job_applies_its_shaper_and_options(make_app):
    app = _app(make_app, ("echoes", ShaperPlugin()))
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, chain())
    with app.app_context():
        job_id = run_jobs.enqueue(
            _request(flow_id, admin.id), shaper="test.echoes", hold_end=True, prefix="x.", args={"a": 1}
        )
    info = _done(app, job_id)
    assert info.state is JobState.FINISHED and info.name == "runs.flow"
    assert info.result == {"status": "completed", "args": {"a": 1}, "job": job_id, "resumed": False}
    # the shaper keeps ``end`` only (prefixed); held until its closing event is written
    assert _names(app, job_id) == ["closing", "x.end", "finished"]


def test_an_unknown_shaper_fails_the_job(make_app):
    app = _app(make_app)
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, chain())
    with app.app_context():
        job_id = run_jobs.enqueue(_request(flow_id, admin.id), shaper="no.such")
    info = _done(app, job_id)
    assert info.state is JobState.FAILED and "no.such" in info.error


def test_jobs_queued_by_an_older_version_still_run(make_app):
    """Old kwargs under each old name: the run job reads them (``legacy``)."""
    from service_build.services import BuildRequest

    app = _app(make_app)
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, chain())
    jobs = state(app).jobs
    with app.app_context():
        req = _request(flow_id, admin.id).to_json()
        found = state(app).host.hooks.find_flow(user_id=admin.id, flow_id_or_name=flow_id, public=False)
        assert found is not None
        flow = found.as_dict()  # an older version queued the flow's JSON
        old = {
            "runs.flow": {"request": req, "events": ["end"]},
            "run.webhook": {"request": {**req, "surface": "webhook"}, "flow": flow},
            "workflows.run": {"request": {**req, "surface": "workflows"}, "output_ids": None, "globals_": {"g": "1"}},
            "build.flow": BuildRequest(
                owner=admin.id, run_user_id=admin.id, flow_id=flow_id, run_flow_id=flow_id
            ).kwargs(),
        }
        ids = {name: jobs.enqueue(name, owner=admin.id, kwargs=kwargs) for name, kwargs in old.items()}
    infos = {name: _done(app, job_id) for name, job_id in ids.items()}
    assert {name: i.state for name, i in infos.items()} == dict.fromkeys(old, JobState.FINISHED)
    assert infos["runs.flow"].result["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "hi"
    assert _names(app, ids["runs.flow"]) == ["end", "finished"]
    assert "run.end" in _names(app, ids["run.webhook"])
    assert infos["workflows.run"].result["status"] == "completed"
    assert infos["workflows.run"].result["globals"] == {"g": "1"}
    assert _names(app, ids["workflows.run"])[-3:] == ["output", "end", "finished"]
    assert infos["build.flow"].result["status"] == "completed"


def test_a_build_that_cannot_start_is_a_finished_job_saying_why(make_app):
    app = _app(make_app)
    client = app.test_client()
    admin = superuser(client)
    with app.app_context():
        missing = "00000000-0000-0000-0000-000000000000"
        job_id = run_jobs.enqueue(_request(missing, admin.id), shaper="build.events", job="build.flow")
    info = _done(app, job_id)
    assert info.state is JobState.FINISHED and info.result == {"status": "invalid"}
    [error] = [e for e in state(app).jobs.read_events(job_id) if e.name == "error"]
    assert f"Flow with id {missing} not found" in str(error.data)


def test_a_failing_flow_fails_a_v1_job_but_finishes_a_build(make_app):
    app = _app(make_app)
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, failing_flow())
    with app.app_context():
        v1 = run_jobs.enqueue(_request(flow_id, admin.id))
        built = run_jobs.enqueue(_request(flow_id, admin.id), shaper="build.events", job="build.flow")
    assert _done(app, v1).state is JobState.FAILED
    assert _done(app, built).state is JobState.FINISHED and _done(app, built).result["status"] == "failed"


def test_the_resume_pointer_is_the_checkpoint(make_app):
    """A run paused without a job of its own is found again under the id its surface gave it."""
    app = _app(make_app)
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, chain(("AskApproval", "AskApproval-CCCCC", {})))
    with app.app_context():
        prepared = runs.prepare(_request(flow_id, admin.id))
        outcome = runs.execute(prepared)  # in the request: its checkpoint has no job
        request_id = outcome.suspended["request_id"]
        assert resumes.resumed_as(admin.id, "surface-run-1") is None
        job_id = run_jobs.resume(request_id, admin.id, "approve", paused_job_id="surface-run-1")
        assert resumes.resumed_as(admin.id, "surface-run-1") == job_id
        assert resumes.resumed_as("someone-else", "surface-run-1") is None
        assert resumes.current(state(app).jobs, admin.id, "surface-run-1").id == job_id
        assert resumes.current(state(app).jobs, "someone-else", "surface-run-1") is None
    assert _done(app, job_id).state is JobState.FINISHED


def test_service_worker_preloads_each_surfaces_shaper_module(make_app):
    from core.jobs.worker import preload

    app = _app(make_app)
    modules = preload(app)
    assert {"core.runs.jobs", "service_build.jobs", "service_run.jobs", "service_workflows.jobs"} <= set(modules)


def test_a_requests_job_json_is_its_json_without_the_deep_copy():
    """``RunRequest.to_job_json`` names every field of the request and of its inputs, as ``to_json`` does."""
    from core.runs.service import RunInput, RunRequest

    req = RunRequest(
        flow="f", user_id="u", inputs=[RunInput("x", components=["a"], session="s")], tweaks={"n": {"k": 1}}
    )
    assert req.to_job_json() == req.to_json()
    assert req.to_job_json()["tweaks"] is req.tweaks and req.to_json()["tweaks"] is not req.tweaks


def test_an_observers_request_json_reads_scalars_without_converting_the_request():
    """``RunStarted.request`` (``RequestJson``): a scalar field is read from the request as its JSON has it, without
    the whole request's deep copy (the triggers recorder reads ``webhook_payload`` as every job's run starts); a
    field holding a structure, or iterating, still makes the JSON, whose values are the same."""
    from core.runs.observing import RequestJson
    from core.runs.service import RunInput, RunRequest

    req = RunRequest(flow="f", user_id="u", inputs=[RunInput("x")], tweaks={"n": {"k": 1}}, webhook_payload="{}")
    full = req.to_json()
    lazy = RequestJson(req)
    assert lazy.get("webhook_payload") == "{}" and lazy["flow"] == "f" and lazy.get("run_id") is None
    assert lazy.get("store_messages") is True and lazy.get("no_such_field", 7) == 7
    assert lazy["inputs"] == full["inputs"]
    assert lazy._data is None  # nothing converted yet
    assert lazy["tweaks"] == full["tweaks"] and lazy["tweaks"] is not req.tweaks  # a copy, made now
    assert lazy._data is not None and dict(lazy) == full
