"""``make typecheck`` covers every plugin and bundle: each distribution's directory is a mypy root."""

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_plugin_and_bundle_is_a_mypy_root():
    cfg = configparser.RawConfigParser()
    cfg.read(ROOT / "setup.cfg")
    roots = {p.strip().removeprefix("$MYPY_CONFIG_FILE_DIR/") for p in cfg.get("mypy", "mypy_path").split(",")}
    roots.discard("")
    packages = sorted(ROOT.glob("plugins/*/service_*")) + sorted(ROOT.glob("bundles/*/service_bundle_*"))
    assert packages
    assert "plugins/catalog" in roots  # the catalog plugin (moved out of the run plugin) is checked too
    assert roots == {str(p.parent.relative_to(ROOT)) for p in packages if (p / "__init__.py").exists()}
    makefile = (ROOT / "Makefile").read_text()
    assert "mypy -p core $(TYPED_PACKAGES)" in makefile
    assert "plugins/*/service_*/__init__.py bundles/*/service_bundle_*/__init__.py" in makefile
