"""The plugin host: discovery, filters, broken plugins, duplicates, introspection."""

import textwrap

import pytest

from core.plugins import PluginError, build_host

GOOD = """
from flask_smorest import Blueprint
from core import hookimpl

__version__ = "9.9"
blp = Blueprint("fake_good", __name__, url_prefix="/api/v1/fake")

@blp.route("/ping")
def ping():
    return {"pong": True}

@hookimpl
def register_blueprints():
    return [blp]
"""
BROKEN = "raise ImportError('this plugin is broken on purpose')\n"
TYPO = """
from core import hookimpl

@hookimpl
def register_blueprint():  # typo: the spec is register_blueprints
    return []
"""


@pytest.fixture
def fake_plugins(tmp_path, monkeypatch):
    """Three installed distributions with entry points: a good, a broken and a mistyped plugin."""
    site = tmp_path / "site"
    site.mkdir()
    for name, source in (("good", GOOD), ("broken", BROKEN), ("typo", TYPO)):
        (site / f"svc_fake_{name}.py").write_text(textwrap.dedent(source))
        info = site / f"svc_fake_{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: svc-fake-{name}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[service.plugins]\nfake_{name} = svc_fake_{name}\n")
    monkeypatch.syspath_prepend(str(site))
    yield
    import sys

    for name in ("good", "broken", "typo"):
        sys.modules.pop(f"svc_fake_{name}", None)


def test_broken_and_mistyped_plugins_are_skipped_by_name(fake_plugins, make_app):
    app = make_app()
    host = app.extensions["service"].host
    assert "fake_good" in host.infos
    assert "this plugin is broken on purpose" in host.failures["fake_broken"]
    assert "unknown hooks: register_blueprint" in host.failures["fake_typo"]
    assert "fake_typo" not in host.infos
    client = app.test_client()
    assert client.get("/api/v1/fake/ping").get_json() == {"pong": True}
    # the other plugins still loaded
    assert client.get("/api/v1/users/whoami").status_code == 403


def test_introspection_reports_versions_and_hooks(fake_plugins, make_app):
    host = make_app().extensions["service"].host
    info = host.infos["fake_good"]
    assert (info.version, info.distribution, info.kind) == ("1.0", "svc-fake-good", "plugin")
    assert info.hooks == ("register_blueprints",)
    core = host.infos["core"]
    assert core.kind == "core" and "register_blueprints" in core.hooks
    assert host.list()[0].name == "core"


def test_service_plugins_loads_only_the_named_ones(fake_plugins, make_app, monkeypatch):
    monkeypatch.setenv("SERVICE_PLUGINS", "fake_good,accounts")
    app = make_app()
    host = app.extensions["service"].host
    assert set(host.infos) == {"core", "fake_good", "accounts"}
    assert host.failures == {}


def test_a_disabled_plugin_loses_its_routes(fake_plugins, make_app, monkeypatch):
    monkeypatch.setenv("SERVICE_DISABLED_PLUGINS", "fake_good,fake_broken,fake_typo")
    app = make_app()
    assert "fake_good" not in app.extensions["service"].host.infos
    response = app.test_client().get("/api/v1/fake/ping")
    assert response.status_code == 404
    assert response.get_json() == {"detail": "Not Found"}
    assert "/api/v1/fake/ping" not in app.test_client().get("/openapi.json").get_json()["paths"]


def test_naming_a_missing_plugin_is_reported(make_app, monkeypatch):
    monkeypatch.setenv("SERVICE_PLUGINS", "accounts,nope")
    host = make_app().extensions["service"].host
    assert host.failures == {"nope": "not installed"}


def test_duplicate_plugin_names_are_rejected():
    import types

    one, two = types.ModuleType("one"), types.ModuleType("two")
    with pytest.raises(PluginError, match="'same' is already registered"):
        build_host([("same", one), ("same", two)], None, ())


def test_duplicate_contributions_are_rejected(make_app):
    import types

    from flask_smorest import Blueprint

    from core import hookimpl

    def plugin(label):
        module = types.ModuleType(label)
        blp = Blueprint("clash", label)

        @hookimpl
        def register_blueprints():
            return [blp]

        module.register_blueprints = register_blueprints
        return module

    with pytest.raises(PluginError, match="'clash' is contributed by both 'a' and 'b'"):
        make_app(plugins=[("a", plugin("a")), ("b", plugin("b"))])


def test_explicit_plugin_list_builds_exactly_those(make_app):
    app = make_app(plugins=[])
    assert set(app.extensions["service"].host.infos) == {"core"}
    assert app.test_client().get("/api/v1/users/whoami").status_code == 404
    app = make_app(plugins=["accounts"])
    assert set(app.extensions["service"].host.infos) == {"core", "accounts"}


PUBLISHER_SPECS = """
from core import hookspec

__all__ = ["fake_greeting"]

@hookspec
def fake_greeting(name: str) -> str:
    '''Return a greeting for ``name``.'''
"""
PUBLISHER = """
from core import hookimpl

HOOKSPECS = "svc_fake_publisher_specs"

def greet(host, name):
    return host.hook.fake_greeting(name=name)
"""
# sorts before the publisher, so it is loaded first: the host must add every spec before registering
IMPLEMENTER = """
from core import hookimpl

@hookimpl
def fake_greeting(name):
    return f"hello {name}"
"""
OPTIONAL = """
from core import hookimpl

@hookimpl(optionalhook=True)
def hook_of_a_plugin_not_installed():
    return 1
"""


def _install(site, dist: str, module: str, entry: str, source: str) -> None:
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[service.plugins]\n{entry} = {module}\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    import sys

    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    before = set(sys.modules)
    yield path
    for name in set(sys.modules) - before:
        if name.startswith("svc_fake"):
            sys.modules.pop(name, None)


def test_a_plugin_publishes_a_hook_another_implements(site, make_app):
    (site / "svc_fake_publisher_specs.py").write_text(textwrap.dedent(PUBLISHER_SPECS))
    _install(site, "svc-fake-publisher", "svc_fake_publisher", "zz_publisher", PUBLISHER)
    _install(site, "svc-fake-implementer", "svc_fake_implementer", "aa_implementer", IMPLEMENTER)
    _install(site, "svc-fake-optional", "svc_fake_optional", "fake_optional", OPTIONAL)
    host = make_app().extensions["service"].host
    assert {"zz_publisher", "aa_implementer", "fake_optional"} <= set(host.infos)
    import svc_fake_publisher

    assert svc_fake_publisher.greet(host, "ada") == ["hello ada"]
    # an explicit plugin list gets the same two-phase registration
    explicit = build_host(["aa_implementer", "zz_publisher"], None, ())
    assert explicit.hook.fake_greeting(name="bo") == ["hello bo"]


def test_without_the_publisher_an_implementation_is_an_unknown_hook(site, make_app):
    _install(site, "svc-fake-implementer", "svc_fake_implementer", "aa_implementer", IMPLEMENTER)
    host = make_app().extensions["service"].host
    assert "unknown hooks: fake_greeting" in host.failures["aa_implementer"]


def test_a_first_party_plugin_with_a_mistyped_hook_fails_start_up(site, make_app):
    _install(site, "service-fake-typo", "svc_fake_firstparty", "fake_firstparty", TYPO)
    with pytest.raises(PluginError, match=r"first-party plugin 'fake_firstparty'.*unknown hooks: register_blueprint"):
        make_app()


def test_a_plugin_cannot_publish_a_core_hook(site, make_app):
    (site / "svc_fake_clash_specs.py").write_text("from core.hookspecs import find_flow\n__all__ = ['find_flow']\n")
    _install(site, "svc-fake-clash", "svc_fake_clash", "fake_clash", 'HOOKSPECS = "svc_fake_clash_specs"\n')
    host = make_app().extensions["service"].host
    assert "publishes hooks the core already has: find_flow" in host.failures["fake_clash"]
