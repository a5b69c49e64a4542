"""maixpy-v1-stubs: PEP 561 stubs for MaixPy (K210) scripts.

Source of truth is the plain stub tree ``typings/`` (usable as MYPYPATH / pyright stubPath as is).
The build turns every top-level stub ``X.pyi`` / package ``X/`` in it into a stub-only package
``X-stubs`` (``X-stubs/__init__.pyi``) -- the PEP 561 layout that mypy and pyright look for in
site-packages, and that works for single-file runtime modules like ``sensor`` too -- and ships the
whole tree as data files in ``<prefix>/share/maixpy-stubs/typings`` (outside site-packages, where
mypy accepts it on MYPYPATH) for the standard-library names (``time``, ``gc``, ``os``), which no
installed package may override.

setuptools cannot list ``X-stubs`` (not an identifier) in pyproject.toml, hence this setup.py.
"""

import os
import shutil
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
TYPINGS = HERE / "typings"
#: Where the plain stub tree is installed, relative to the installation prefix (sys.prefix in a venv).
DATA_DIR = "share/maixpy-stubs/typings"
#: Stubs for names that CPython's standard library owns: only MYPYPATH/stubPath can serve these.
STDLIB_NAMES = {"time", "gc", "os", "sys"}


def _case_sensitive(directory: str) -> bool:
    with tempfile.NamedTemporaryFile(prefix="CaseCheck", dir=directory) as f:
        return not os.path.exists(os.path.join(directory, os.path.basename(f.name).lower()))


def _stub_sources() -> dict[str, Path]:
    """``X-stubs`` package name -> its source (a ``.pyi`` file or a package directory)."""
    sources: dict[str, Path] = {}
    for path in sorted(TYPINGS.iterdir()):
        name = path.stem if path.suffix == ".pyi" else path.name
        if name in STDLIB_NAMES or name.startswith((".", "_")):
            continue
        if path.suffix == ".pyi" or (path / "__init__.pyi").is_file():
            sources[name + "-stubs"] = path
    return sources


class build_stubs(build_py):  # noqa: N801 - setuptools command naming
    def run(self):
        super().run()
        out = Path(self.build_lib)
        sources = _stub_sources()
        if "maix-stubs" in sources and "Maix-stubs" in sources and not _case_sensitive(str(out)):
            # maix-stubs and Maix-stubs would be one folder here: keep Maix (MaixPy-v1's own module);
            # `from maix import KPU` is then served by maixpy_stubs/typings/maix.pyi via MYPYPATH/stubPath.
            print("warning: case-insensitive filesystem: not installing maix-stubs (see README.md)")
            del sources["maix-stubs"]
        for package, src in sources.items():
            dest = out / package
            shutil.rmtree(dest, ignore_errors=True)
            if src.is_dir():
                shutil.copytree(src, dest, ignore=shutil.ignore_patterns("*.py[co]", "__pycache__"))
            else:
                dest.mkdir(parents=True)
                shutil.copyfile(src, dest / "__init__.pyi")
        shutil.copyfile(HERE / "extras" / "__builtins__.pyi", out / "maixpy_stubs" / "__builtins__.pyi")


def _typings_data_files() -> list[tuple[str, list[str]]]:
    """The plain stub tree as data files: pip puts them in ``<prefix>/share/maixpy-stubs/typings``.

    Outside site-packages on purpose: mypy refuses a MYPYPATH or ``mypy_path`` entry inside
    site-packages ("site-packages is in the MYPYPATH. Please remove it."), and the tree is only
    needed there for ``time``/``gc``/``os``, which no installed stub package may override.
    """
    groups: dict[str, list[str]] = {}
    for path in sorted(TYPINGS.rglob("*.pyi")):
        folder = path.parent.relative_to(TYPINGS).as_posix()
        target = f"{DATA_DIR}/{folder}".rstrip("/.") if folder != "." else DATA_DIR
        groups.setdefault(target, []).append(path.relative_to(HERE).as_posix())
    return sorted(groups.items())


setup(
    name="maixpy-v1-stubs",
    version="0.1.0",
    description="Type stubs (PEP 561) for MaixPy K210 scripts: sensor, image, lcd, KPU, Maix, maix, utime, ...",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.10",
    packages=["maixpy_stubs"],
    cmdclass={"build_py": build_stubs},
    data_files=_typings_data_files(),
    zip_safe=False,
    classifiers=["Typing :: Stubs Only", "Programming Language :: Python :: 3"],
)
