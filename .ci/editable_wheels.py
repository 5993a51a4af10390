"""Editable wheels of every local distribution, built in one Python process (``make install``).

An installer builds each local distribution in a Python process of its own: it asks setuptools for the
metadata, then for the editable wheel, and imports setuptools twice per distribution. With 34
distributions that was 68 processes, 2 to 6 seconds each on a loaded 2-core machine: most of a fresh
clone's install. Here setuptools is imported once and :func:`setuptools.build_meta.build_editable` runs
for each distribution in turn (about 0.1 s each); the installer then installs the wheels as files, reading
their metadata from the wheel. The wheels are the same PEP 660 editable wheels pip builds (the sources stay
where they are: an edit needs no reinstall; a changed ``setup.cfg`` does, which the Makefile's stamp sees).

Run it as ``python .ci/editable_wheels.py <output directory> <project directory>...``; it prints the
wheels' paths, one a line. It needs setuptools and wheel in the running interpreter (the Makefile installs
the pinned ones first).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path


def build(out: Path, projects: list[Path]) -> list[Path]:
    from setuptools import build_meta

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    here = Path.cwd()
    wheels = []
    try:
        for project in projects:
            os.chdir(project)
            with warnings.catch_warnings():
                # setuptools' advice (a package at its project's root, our layout on purpose; data-only
                # package directories): pip's --quiet hid it too. An error still raises.
                warnings.simplefilter("ignore")
                wheels.append(out / build_meta.build_editable(str(out)))
    finally:
        os.chdir(here)
    return wheels


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python .ci/editable_wheels.py <output directory> <project directory>...", file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    projects = [Path(p).resolve() for p in argv[1:]]
    # setuptools prints a page of progress per distribution: the wheels' paths are what the caller reads
    stdout = sys.stdout
    with open(os.devnull, "w") as quiet:
        sys.stdout = quiet
        try:
            wheels = build(out, projects)
        finally:
            sys.stdout = stdout
    for wheel in wheels:
        print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
