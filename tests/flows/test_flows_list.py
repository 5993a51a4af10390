"""GET /api/v1/flows/: every filter, pagination edges, headers, gzip, example flows."""

from __future__ import annotations

import pytest

URL = "/api/v1/flows/"


def make(client, caller, name, **body):
    response = client.post(URL, json={"name": name, **body}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def names(response):
    body = response.get_json()
    items = body["items"] if isinstance(body, dict) else body
    return sorted(f["name"] for f in items)


@pytest.fixture
def seeded(client, alice, bob):
    project = client.post("/api/v1/projects/", json={"name": "Other"}, headers=alice.bearer).get_json()
    make(client, alice, "f1")
    make(client, alice, "f2", flow_type="agent")
    make(client, alice, "c1", is_component=True, data={"nodes": [], "edges": []})
    make(client, alice, "p1", folder_id=project["id"])
    make(client, bob, "bob-flow")
    return project


def test_get_all_lists_own_flows_and_examples(client, alice, seeded):
    response = client.get(URL, headers=alice.bearer)
    assert response.status_code == 200
    flows = response.get_json()
    own = [f for f in flows if f["user_id"] == alice.id]
    examples = [f for f in flows if f["user_id"] is None]
    assert sorted(f["name"] for f in own) == ["c1", "f1", "f2", "p1"]
    assert len(examples) >= 3 and all(f["folder_id"] == examples[0]["folder_id"] for f in examples)
    assert "bob-flow" not in [f["name"] for f in flows]


def test_remove_example_flows_components_only_folder_and_type(client, alice, seeded):
    assert names(client.get(URL + "?remove_example_flows=true", headers=alice.bearer)) == ["c1", "f1", "f2", "p1"]
    assert names(client.get(URL + "?components_only=true", headers=alice.bearer)) == ["c1"]
    assert names(client.get(URL + f"?folder_id={seeded['id']}", headers=alice.bearer)) == ["p1"]
    assert names(client.get(URL + "?flow_type=agent", headers=alice.bearer)) == ["f2"]
    workflows = names(client.get(URL + "?flow_type=workflow&remove_example_flows=true", headers=alice.bearer))
    assert workflows == ["c1", "f1", "p1"]
    assert client.get(URL + "?flow_type=robot", headers=alice.bearer).status_code == 422


def test_header_flows(client, alice, seeded):
    headers = client.get(URL + "?header_flows=true&remove_example_flows=true", headers=alice.bearer).get_json()
    assert set(headers[0]) == {
        "id",
        "name",
        "folder_id",
        "is_component",
        "endpoint_name",
        "description",
        "data",
        "access_type",
        "tags",
        "mcp_enabled",
        "flow_type",
        "a2a_enabled",
        "a2a_card_overrides",
        "action_name",
        "action_description",
    }
    by_name = {h["name"]: h for h in headers}
    assert by_name["c1"]["data"] == {"nodes": [], "edges": []}  # components keep their data
    assert by_name["f1"]["data"] is None


def test_page_of_the_default_project(client, alice, seeded):
    page = client.get(URL + "?get_all=false", headers=alice.bearer).get_json()
    assert set(page) == {"items", "total", "page", "size", "pages"}
    assert (page["total"], page["page"], page["size"], page["pages"]) == (3, 1, 50, 1)
    assert sorted(f["name"] for f in page["items"]) == ["c1", "f1", "f2"]  # p1 is in another project
    other = client.get(URL + f"?get_all=false&folder_id={seeded['id']}", headers=alice.bearer).get_json()
    assert [f["name"] for f in other["items"]] == ["p1"]
    comps = client.get(URL + "?get_all=false&components_only=true", headers=alice.bearer).get_json()
    assert comps["total"] == 1


def test_pagination_edges(client, alice):
    for i in range(5):
        make(client, alice, f"n{i}")
    seen = []
    for page in (1, 2, 3):
        body = client.get(URL + f"?get_all=false&page={page}&size=2", headers=alice.bearer).get_json()
        assert (body["total"], body["pages"], body["page"], body["size"]) == (5, 3, page, 2)
        seen += [f["name"] for f in body["items"]]
    assert sorted(seen) == [f"n{i}" for i in range(5)] and len(seen) == 5
    beyond = client.get(URL + "?get_all=false&page=4&size=2", headers=alice.bearer).get_json()
    assert beyond["items"] == [] and beyond["total"] == 5
    assert len(client.get(URL + "?get_all=false&size=100", headers=alice.bearer).get_json()["items"]) == 5
    assert len(client.get(URL + "?get_all=false&size=1", headers=alice.bearer).get_json()["items"]) == 1
    for bad in ("page=0", "size=0", "size=101", "page=-1", "size=abc"):
        response = client.get(URL + f"?get_all=false&{bad}", headers=alice.bearer)
        assert response.status_code == 422, bad
        assert response.get_json()["detail"][0]["loc"][0] == "query"


def test_empty_page(client, alice):
    body = client.get(URL + "?get_all=false", headers=alice.bearer).get_json()
    assert body == {"items": [], "total": 0, "page": 1, "size": 50, "pages": 0}


def test_gzip_only_when_accepted(client, alice, seeded):
    import gzip
    import json

    plain = client.get(URL, headers=alice.bearer)
    assert "Content-Encoding" not in plain.headers
    zipped = client.get(URL, headers={**alice.bearer, "Accept-Encoding": "gzip, deflate"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(zipped.data)) == plain.get_json()
