"""Docs that cannot drift: every hook, the core's and those plugins publish, is documented and exercised."""

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

from core import hookspecs
from core.hookcalls import Hooks

ROOT = Path(__file__).resolve().parents[2]


def _spec_modules() -> list[ModuleType]:
    """The core's hook specs and every module a plugin publishes (``plugins/<name>/service_<name>/hookspecs.py``)."""
    published = [
        importlib.import_module(f"{path.parent.name}.hookspecs")
        for path in sorted(ROOT.glob("plugins/*/service_*/hookspecs.py"))
    ]
    return [hookspecs, *published]


def _all_hooks() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for module in _spec_modules():
        for name in module.__all__:
            assert name not in found, f"{name} is published by {found[name].__name__} and {module.__name__}"
            found[name] = module
    return found


def test_plugins_publish_hooks():
    """The published specs are found (a glob that finds nothing would make every test below vacuous)."""
    published = {n for n, m in _all_hooks().items() if m is not hookspecs}
    assert {"on_flow_changed", "find_project", "find_agent_flow", "stored_flows", "job_queue_metrics"} <= published


def test_every_hook_is_documented_and_nothing_else():
    page = (ROOT / "docs" / "hooks.md").read_text()
    documented = re.findall(r"^\| `(\w+)\(", page, flags=re.MULTILINE)
    assert len(documented) == len(set(documented))
    assert set(documented) == set(_all_hooks())


def test_every_documented_signature_is_the_hooks():
    """The arguments written in docs/hooks.md are the hookspec's, in order."""
    page = (ROOT / "docs" / "hooks.md").read_text()
    hooks = _all_hooks()
    for name, args in re.findall(r"^\| `(\w+)\(([^)]*)\)`", page, flags=re.MULTILINE):
        documented = [a.strip() for a in args.split(",") if a.strip()]
        assert documented == list(inspect.signature(getattr(hooks[name], name)).parameters), name


def test_published_hooks_name_their_publisher_in_the_docs():
    """Each published hook's row says which plugin publishes it (the ``service_<name>.hookspecs`` module)."""
    page = (ROOT / "docs" / "hooks.md").read_text()
    for name, module in _all_hooks().items():
        if module is hookspecs:
            continue
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}("))
        assert f"`{module.__name__}`" in row, f"{name}: the row must name {module.__name__}"


def test_every_hook_has_a_test():
    """Each hook is implemented or called by some test (a plugin in the test, or a call through the host)."""
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    for name in _all_hooks():
        assert re.search(rf"def {name}\(|hook\.{name}\(|hooks\.{name}\(|\.{name}[,)]|\"{name}\"", tests), (
            f"no test exercises {name}"
        )


def test_every_hook_has_a_docstring_and_is_exported():
    for module in _spec_modules():
        for name in module.__all__:
            assert getattr(module, name).__doc__, name
        declared = {n for n, v in vars(module).items() if getattr(v, "service_spec", None) is not None}
        assert declared == set(module.__all__), module.__name__


def test_every_hook_is_used_by_code_or_tests():
    sources = "\n".join(
        p.read_text()
        for base in ("core", "plugins", "bundles", "tests")
        for p in (ROOT / base).rglob("*.py")
        if "hookspecs.py" not in p.name
    )
    for name in _all_hooks():
        assert re.search(rf"def {name}\(", sources), f"no implementation of {name}"


def test_the_typed_facade_mirrors_every_core_hook_the_core_calls():
    """``core.hookcalls.Hooks`` has a method per core hook (contributions are collected by the host), with the
    spec's parameters as keywords, so a call site is checked against the spec."""
    for name in hookspecs.__all__:
        if name.startswith("register_"):
            continue
        method = getattr(Hooks, name, None)
        assert method is not None, f"Hooks has no method {name}"
        params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
        assert [p.name for p in params] == list(inspect.signature(getattr(hookspecs, name)).parameters), name
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), name


def test_each_publishing_plugin_names_its_spec_module():
    """A spec module is added to the host only through its plugin's ``HOOKSPECS``."""
    for module in _spec_modules()[1:]:
        package = module.__name__.split(".")[0]
        plugin = importlib.import_module(f"{package}.plugin")
        assert module.__name__ == plugin.HOOKSPECS, package
