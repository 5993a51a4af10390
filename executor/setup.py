"""Build ``service-executor``: the engine's sources come from the repository's ``core`` package.

Only ``core/__init__.py``, ``core/sandbox.py`` and ``core/engine/`` go in (the rest of ``core`` is the web service:
Flask, SQLAlchemy, Redis); the import-linter contract "the engine knows no web framework,
database, job queue or run service" is what makes that cut clean. Build from a checkout
(``pip install ./executor``): the sources are read from ``../core``.

The package ``core`` is also shipped by ``service-core``: install the executor in its own
environment (a container, a CI job), not next to the full service.
"""

from setuptools import setup
from setuptools.command.build_py import build_py

#: the modules of package ``core`` a flow run needs: the package marker and the code sandbox (standard library
#: only; the sandbox bundle's components run user code through it)
CORE_MODULES = ("__init__", "sandbox")


class EngineOnly(build_py):
    """Of package ``core`` keep :data:`CORE_MODULES` only; ``core.engine`` whole."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        if package == "core":
            return [m for m in modules if m[1] in CORE_MODULES]
        return modules


setup(
    package_dir={
        "core": "../core",
        "core.engine": "../core/engine",
        "service_exec": "service_exec",
    },
    cmdclass={"build_py": EngineOnly},
)
