"""The reference's published Python client, ``langflow-sdk`` (PyPI, the ``test`` extra), against a live server.

Every call the client makes: flows (list, get, create, update, upsert, delete), runs (run, run_flow,
stream), projects (list, get, create, update, delete, download, upload), the file helpers (push, pull,
push_project, pull_project) and the async client (run, stream, run_background).
"""

from __future__ import annotations

import asyncio
import io
import json
import uuid
import zipfile

import pytest

pytest.importorskip("langflow_sdk", reason="langflow-sdk is not installed: pip install -e '.[test]' -c constraints.txt")

from langflow_sdk import AsyncClient, Client
from langflow_sdk.exceptions import LangflowAuthError, LangflowNotFoundError
from langflow_sdk.models import FlowCreate, FlowUpdate, ProjectCreate, ProjectUpdate, RunRequest

from tests.run.runkit import chat_echo


@pytest.fixture(scope="module")
def sdk(live):
    with Client(live.base, api_key=live.key) as client:
        yield client


def test_flows_crud(sdk):
    created = sdk.create_flow(FlowCreate(name="SDK flow", data=chat_echo(), endpoint_name="sdk-echo"))
    assert created.name == "SDK flow" and created.endpoint_name == "sdk-echo"
    assert sdk.get_flow(created.id).data["nodes"]
    # list_flows() sends get_all=false, which the reference (and this service) answer with a page, not the
    # list the client validates: only get_all=True works against either
    assert created.id in {f.id for f in sdk.list_flows(get_all=True)}
    assert created.id in {f.id for f in sdk.list_flows(get_all=True, remove_example_flows=True)}
    assert created.id in {f.id for f in sdk.list_flows(get_all=True, header_flows=True)}
    updated = sdk.update_flow(created.id, FlowUpdate(description="updated", tags=["sdk"]))
    assert updated.description == "updated"
    sdk.delete_flow(created.id)
    with pytest.raises(LangflowNotFoundError):
        sdk.get_flow(created.id)


def test_upsert_creates_then_updates(sdk):
    flow_id = uuid.uuid4()
    flow, created = sdk.upsert_flow(flow_id, FlowCreate(name="Upserted", data=chat_echo()))
    assert created is True and flow.id == flow_id
    flow, created = sdk.upsert_flow(flow_id, FlowCreate(name="Upserted again", data=chat_echo()))
    assert created is False and flow.name == "Upserted again"


def test_run_and_stream(sdk):
    flow = sdk.create_flow(FlowCreate(name="Runner", data=chat_echo(), endpoint_name="sdk-runner"))
    answer = sdk.run("sdk-runner", "hello sdk")
    assert answer.first_text_output() == "hello sdk" and answer.get_chat_output() == "hello sdk"
    assert answer.session_id and not answer.has_errors()
    tweaked = sdk.run_flow(
        flow.id, RunRequest(input_value="tweaked", tweaks={"ChatOutput-BBBBB": {"sender_name": "T"}})
    )
    assert tweaked.first_text_output() == "tweaked"
    chunks = list(sdk.stream(flow.id, "streamed"))
    assert [c.event for c in chunks if c.is_end] == ["end"]
    final = next(c for c in chunks if c.is_end).final_response()
    assert final is not None and final.first_text_output() == "streamed"
    assert any(c.event == "add_message" for c in chunks)


def test_projects_download_and_upload(sdk):
    project = sdk.create_project(ProjectCreate(name="SDK project", description="d"))
    flow = sdk.create_flow(FlowCreate(name="In project", data=chat_echo(), folder_id=project.id))
    assert project.id in {p.id for p in sdk.list_projects()}
    full = sdk.get_project(project.id)
    assert [f.id for f in full.flows] == [flow.id]
    assert sdk.update_project(project.id, ProjectUpdate(name="SDK project 2")).name == "SDK project 2"
    archive = sdk.download_project(project.id)
    [(name, raw)] = archive.items()
    assert name.endswith(".json") and json.loads(raw)["name"] == "In project"

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("uploaded.json", json.dumps({"name": "Uploaded", "data": chat_echo()}))
    uploaded = sdk.upload_project(buffer.getvalue())
    assert [f.name for f in uploaded] == ["Uploaded"]
    sdk.delete_project(project.id)
    with pytest.raises(LangflowNotFoundError):
        sdk.get_project(project.id)


def test_push_and_pull_files(sdk, tmp_path):
    flow_id = str(uuid.uuid4())
    source = tmp_path / "flow.json"
    source.write_text(json.dumps({"id": flow_id, "name": "Pushed", "data": chat_echo()}))
    flow, created = sdk.push(source)
    assert created is True and str(flow.id) == flow_id
    flow, created = sdk.push(source)
    assert created is False
    pulled = sdk.pull(flow_id, output=tmp_path / "out" / "pulled.json")
    assert pulled["name"] == "Pushed" and (tmp_path / "out" / "pulled.json").exists()

    project = sdk.create_project(ProjectCreate(name="Pulled project"))
    folder = tmp_path / "project"
    folder.mkdir()
    for n in range(2):
        body = {"id": str(uuid.uuid4()), "name": f"P{n}", "data": chat_echo(), "folder_id": str(project.id)}
        (folder / f"p{n}.json").write_text(json.dumps(body))
    results = sdk.push_project(folder)
    assert [created for _f, created in results] == [True, True]
    written = sdk.pull_project(project.id, output_dir=tmp_path / "pulled")
    assert sorted(written) == ["P0", "P1"]


def test_async_client(live):
    async def go():
        async with AsyncClient(live.base, api_key=live.key) as client:
            flow = await client.create_flow(FlowCreate(name="Async", data=chat_echo()))
            ran = await client.run(flow.id, "async hello")
            chunks = [c async for c in client.stream(flow.id, "async stream")]
            job = await client.run_background(flow.id, input_value="in the background")
            done = await job.wait_for_completion(timeout=30)
            return ran, chunks, done

    ran, chunks, done = asyncio.run(go())
    assert ran.first_text_output() == "async hello"
    assert any(c.is_end for c in chunks)
    assert done.first_text_output() == "in the background"


def test_a_wrong_key_is_an_auth_error(live):
    with Client(live.base, api_key="sk-wrong") as client, pytest.raises(LangflowAuthError):
        client.list_flows()
