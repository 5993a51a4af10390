"""The flows of a project go to a Git repository, are changed in a review, and are imported into a second
instance (issue 31, 'Done when'): ``git init``, ``service flows export --project``, commit; a review branch
edits one value, and Git's diff of it is that one line; merged; ``import --dry-run`` says what would change;
the import gives the second instance (its own database) the reviewed flows."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.versions.test_promotion import _instance, _text
from tests.versions.vkit import create, graph

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.test", "GIT_COMMITTER_NAME": "Dev",
           "GIT_COMMITTER_EMAIL": "dev@example.test", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_project_goes_through_git_review_into_a_second_instance(make_app, tmp_path):
    dev, dev_client, dev_user = _instance(make_app, tmp_path, "dev")
    prod, prod_client, prod_user = _instance(make_app, tmp_path, "prod")
    support = dev_client.post("/api/v1/projects/", json={"name": "Support"}, headers=dev_user.bearer).get_json()
    other = dev_client.post("/api/v1/projects/", json={"name": "Scratch"}, headers=dev_user.bearer).get_json()
    bot = create(dev_client, dev_user, graph("hello", "world"), name="Support bot", folder_id=support["id"])
    triage = create(dev_client, dev_user, graph("triage"), name="Triage", folder_id=support["id"])
    scratch = create(dev_client, dev_user, graph("scratch"), name="Experiment", folder_id=other["id"])

    repo = tmp_path / "flows-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    export = ["flows", "export", "--dir", str(repo), "--user-id", dev_user.id, "--project", "Support"]
    assert dev.test_cli_runner().invoke(args=export).exit_code == 0
    assert sorted(p.name for p in repo.glob("*.json")) == sorted([f"{bot['id']}.json", f"{triage['id']}.json"])
    assert not (repo / f"{scratch['id']}.json").exists()  # only the project's flows
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "Support flows from dev")
    # exporting again changes nothing Git can see
    assert dev.test_cli_runner().invoke(args=export).exit_code == 0
    assert git(repo, "status", "--porcelain") == ""

    # a review: a branch edits one value; Git's diff is that line
    git(repo, "checkout", "-q", "-b", "review/friendlier-greeting")
    path = repo / f"{bot['id']}.json"
    doc = json.loads(path.read_text())
    doc["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"] = "hello, reviewed"
    path.write_text(json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    diff = git(repo, "diff", "--unified=0").splitlines()
    changed = [line[0] + line[1:].strip() for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ['-"value": "hello"', '+"value": "hello, reviewed"'], changed
    git(repo, "commit", "-q", "-am", "Friendlier greeting")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "review/friendlier-greeting")

    # the second instance: a dry run lists what would happen and writes nothing
    args = ["flows", "import", "--dir", str(repo), "--user-id", prod_user.id]
    dry = prod.test_cli_runner().invoke(args=[*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert f"would create Support bot ({bot['id']})" in dry.output
    assert f"would create Triage ({triage['id']})" in dry.output
    for flow in (bot, triage):
        assert prod_client.get(f"/api/v1/flows/{flow['id']}", headers=prod_user.bearer).status_code == 404
    done = prod.test_cli_runner().invoke(args=args)
    assert done.exit_code == 0 and "2 create" in done.output, done.output

    listed = prod_client.get("/api/v1/flows/", headers=prod_user.bearer).get_json()
    landed = {f["name"]: f for f in listed if f.get("user_id") == prod_user.id}
    assert sorted(landed) == ["Support bot", "Triage"]
    assert landed["Support bot"]["id"] == bot["id"]
    full = prod_client.get(f"/api/v1/flows/{bot['id']}", headers=prod_user.bearer).get_json()
    assert _text(full) == "hello, reviewed"
    assert len(full["data"]["nodes"]) == 2 and len(full["data"]["edges"]) == 1
    projects = {p["id"]: p["name"] for p in prod_client.get("/api/v1/projects/", headers=prod_user.bearer).get_json()}
    assert {projects[f["folder_id"]] for f in landed.values()} == {"Support"}
    # dev is untouched by the review until it imports too
    assert _text(dev_client.get(f"/api/v1/flows/{bot['id']}", headers=dev_user.bearer).get_json()) == "hello"
    # a second import of the same commit changes nothing
    again = prod.test_cli_runner().invoke(args=[*args, "--dry-run"])
    assert "0 create" in again.output and "0 update" in again.output, again.output
