"""The official a2a-sdk client (current release) against a live server: card, send, stream, get, cancel, resubscribe.

The card says ``protocolVersion: 0.3.0``, so the SDK's client speaks its v0.3 JSON-RPC path
(``CompatJsonRpcTransport``); the 1.0 method names are covered by raw JSON-RPC in
test_a2a_surface.py.
"""

from __future__ import annotations

import asyncio
import uuid
from contextlib import asynccontextmanager

import httpx
import pytest
from a2a.client import AgentCardResolutionError, ClientConfig, create_client
from a2a.client.errors import A2AClientError
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from tests.a2a.a2akit import agent, live, project
from tests.build.buildkit import slow_flow
from tests.run.runkit import chat_echo


def _message(text: str, context_id: str | None = None) -> pb.SendMessageRequest:
    message = pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    if context_id:
        message.context_id = context_id
    return pb.SendMessageRequest(message=message)


@asynccontextmanager
async def _client(base: str, flow_id: str, *, streaming: bool, key: str | None = None):
    """An SDK client resolved from the agent's card URL (its own httpx client, carrying the key if any)."""
    headers = {"x-api-key": key} if key else {}
    http = httpx.AsyncClient(headers=headers, timeout=30)
    try:
        yield await create_client(f"{base}/api/v1/a2a/{flow_id}", ClientConfig(streaming=streaming, httpx_client=http))
    finally:
        await http.aclose()


def _text(task: pb.Task) -> str:
    return "".join(part.text for artifact in task.artifacts for part in artifact.parts)


def test_sdk_client_send_get_stream_and_resubscribe(app, client, admin):
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder, name="Echo agent")

    async def scenario(base: str) -> None:
        # message/send (blocking) through the v0.3 transport
        async with _client(base, flow_id, streaming=False, key=admin.api_key) as sdk:
            responses = [item async for item in sdk.send_message(_message("hello over a2a"))]
            task = responses[-1].task
            assert task.status.state == pb.TASK_STATE_COMPLETED
            assert _text(task) == "hello over a2a"
            got = await sdk.get_task(pb.GetTaskRequest(id=task.id))
            assert got.status.state == pb.TASK_STATE_COMPLETED and _text(got) == "hello over a2a"
            with pytest.raises(TaskNotCancelableError):  # -32002: a completed task
                await sdk.cancel_task(pb.CancelTaskRequest(id=task.id))
            with pytest.raises(TaskNotFoundError):
                await sdk.get_task(pb.GetTaskRequest(id=str(uuid.uuid4())))  # -32001
        # message/stream
        async with _client(base, flow_id, streaming=True, key=admin.api_key) as sdk:
            events = [item async for item in sdk.send_message(_message("streamed answer"))]
            kinds = [item.WhichOneof("payload") for item in events]
            assert kinds[0] == "task" and kinds[-1] == "status_update"
            assert "artifact_update" in kinds
            final = events[-1].status_update
            assert final.status.state == pb.TASK_STATE_COMPLETED
            chunks = [e.artifact_update.artifact for e in events if e.WhichOneof("payload") == "artifact_update"]
            assert "".join(p.text for a in chunks for p in a.parts) == "streamed answer"
            # resubscribe (tasks/resubscribe) replays a finished task's events
            replay = [item async for item in sdk.subscribe(pb.SubscribeToTaskRequest(id=events[0].task.id))]
            assert [item.WhichOneof("payload") for item in replay] == kinds
            assert replay[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        # without the owner's key the SDK call fails (401)
        async with _client(base, flow_id, streaming=False) as sdk:
            with pytest.raises(A2AClientError):
                [item async for item in sdk.send_message(_message("no key"))]

    with live(app) as base:
        asyncio.run(scenario(base))


def test_sdk_client_cancels_a_running_task(app, client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, slow_flow(20), folder_id=folder, name="Slow agent")

    async def scenario(base: str) -> None:
        async with _client(base, flow_id, streaming=True) as sdk:
            stream = sdk.send_message(_message("take your time"))
            first = await anext(stream)
            task_id = first.task.id
            assert first.task.status.state == pb.TASK_STATE_SUBMITTED
            cancelled = await sdk.cancel_task(pb.CancelTaskRequest(id=task_id))
            assert cancelled.status.state == pb.TASK_STATE_CANCELED
            rest = [item async for item in stream]
            assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
            got = await sdk.get_task(pb.GetTaskRequest(id=task_id))
            assert got.status.state == pb.TASK_STATE_CANCELED

    with live(app) as base:
        asyncio.run(scenario(base))


def test_sdk_card_resolution_fails_for_an_unpublished_flow(app, client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder, enabled=False)

    async def scenario(base: str) -> None:
        with pytest.raises(AgentCardResolutionError):
            await create_client(f"{base}/api/v1/a2a/{flow_id}", ClientConfig(streaming=False))

    with live(app) as base:
        asyncio.run(scenario(base))


def test_sdk_client_answers_an_input_required_task(app, client, admin):
    from tests.build.buildkit import chain

    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, chain(("AskApproval", "AskApproval-CCCCC", {})), folder_id=folder, name="Asks")

    async def scenario(base: str) -> None:
        async with _client(base, flow_id, streaming=False, key=admin.api_key) as sdk:
            first = [item async for item in sdk.send_message(_message("ship it"))][-1].task
            assert first.status.state == pb.TASK_STATE_INPUT_REQUIRED
            asked = first.status.message
            assert asked.parts[0].text == "May I say 'ship it'?"
            reply = _message("approved", context_id=first.context_id)
            reply.message.task_id = first.id
            done = [item async for item in sdk.send_message(reply)][-1].task
            assert done.id == first.id and done.status.state == pb.TASK_STATE_COMPLETED
            assert _text(done).startswith("ship it:approved|pid=")
            got = await sdk.get_task(pb.GetTaskRequest(id=first.id))
            assert got.status.state == pb.TASK_STATE_COMPLETED

    with live(app) as base:
        asyncio.run(scenario(base))
