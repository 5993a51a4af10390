"""End-to-end in the browser: the Playground attaches an image to a message (issue 27, #4). The file is
uploaded to the flow, sent with the message as ``files``, and the model (the local OpenAI-compatible
test server) receives it as an ``image_url`` part holding the image's base64."""

from __future__ import annotations

import base64

import pytest

from tests.editor import test_e2e
from tests.editor.test_e2e import api, cookie_header, expect, shot, sign_in
from tests.models.test_app_models import echo_flow
from tests.models.test_multimodal import png

pytestmark = test_e2e.pytestmark  # the module's marks


@pytest.fixture(scope="module")
def server(llm_service):
    return llm_service


def test_playground_attaches_an_image_that_reaches_the_model(page, server, llm, tmp_path):
    sign_in(page)
    status, flow = api(
        server, "POST", "/api/v1/flows/", body={"name": "vision", "data": echo_flow()}, cookies=cookie_header(page)
    )
    assert status == 201, flow
    page.goto(f"/flow/{flow['id']}")
    expect(page.locator(".react-flow__node").first).to_be_visible()
    image = png(4, 3)
    picture = tmp_path / "red.png"
    picture.write_bytes(image)
    llm.reply("A red picture.")
    page.get_by_role("button", name="Playground").click()
    playground = page.get_by_test_id("playground")
    expect(playground.get_by_role("button", name="Attach a file")).to_be_visible()
    playground.get_by_test_id("attach-input").set_input_files(str(picture))
    expect(playground.get_by_test_id("attached-files")).to_contain_text("red.png")
    box = page.get_by_label("Message", exact=True)
    box.fill("What is in this picture?")
    box.press("Enter")
    expect(playground.get_by_test_id("msg-ai").last).to_contain_text("A red picture.")
    expect(playground.get_by_test_id("attached-files")).to_have_count(0)  # sent: the list is cleared
    expect(playground.get_by_test_id("msg-user").last).to_contain_text("red.png")
    shot(page, "playground-attached-image")
    content = [m for m in llm.chat_requests[-1]["messages"] if m["role"] == "user"][-1]["content"]
    assert content[0] == {"type": "text", "text": "What is in this picture?"}
    urls = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(image).decode()]
