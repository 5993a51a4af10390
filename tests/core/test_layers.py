"""Architecture contracts (import-linter): the core imports no plugin; plugins never import each other."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run(
        [str(lint), "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr
    contracts = (ROOT / ".importlinter").read_text().count("[importlinter:contract:")
    assert f"{contracts} kept, 0 broken" in out.stdout


def test_every_first_party_plugin_is_named_in_the_contracts():
    config = (ROOT / ".importlinter").read_text()
    for plugin in (ROOT / "plugins").iterdir():
        if (plugin / "setup.cfg").exists():
            assert f"service_{plugin.name}" in config, plugin.name
    for bundle in (ROOT / "bundles").iterdir():
        if (bundle / "setup.cfg").exists():
            assert f"service_bundle_{bundle.name}" in config, bundle.name
