"""List the MaixPy sample scripts installed with maixemu, or show one (path, header, how to run it).

maixemu run --sample NAME runs one. Each sample is an ordinary MaixPy script: copy it next to
your model and change it. Its first comment lines say which model it needs and the command that
maps it; samples marked "runs as is" use maixemu's own demo model.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: The scripts shipped as package data (``maixemu/samples/*.py``; the repository's ``samples/``
#: is a link to this folder).
SAMPLES_DIR = PACKAGE_DIR / "samples"
#: What ``maixemu run`` runs without a script; listed first, under this name.
DEFAULT_NAME = "default"
DEFAULT_SCRIPT = PACKAGE_DIR / "data" / "default_sample.py"


@dataclass(frozen=True)
class Sample:
    name: str
    path: Path
    summary: str  # the first comment line
    header: tuple[str, ...]  # every leading comment line, without "# "
    needs: tuple[str, ...]  # files its run line maps (models, the --sd folder), by file name

    @property
    def runs_as_is(self) -> bool:
        return not self.needs


def _header(path: Path) -> tuple[str, ...]:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].strip())
    return tuple(lines)


def _needs(header: tuple[str, ...]) -> tuple[str, ...]:
    """The files the header's ``maixemu run samples/X.py ...`` line maps (its first form), by name.

    A ``--sd DIR`` is named by the files its remark lists: ``--sd models (labels.txt there)``.
    """
    text = " ".join(header).replace("\\ ", " ")
    match = re.search(r"maixemu run \S+\.py([^`]*)", text)
    if not match:
        return ()
    found: list[str] = []
    for m in re.finditer(r"--flash\s+\S+=(\S+)|--flash-image\s+(\S+)|--sd\s+\S+\s*(\([^)]*\))?",
                         match.group(1).split(" or ")[0]):
        flash, image, remark = m.groups()
        if flash or image:
            found.append(Path(flash or image).name)
        else:
            found += [f"{name} on /sd" for name in re.findall(r"[\w.-]+\.\w+", remark or "")] or ["a folder as /sd"]
    return tuple(found)


def _load(name: str, path: Path) -> Sample:
    header = _header(path)
    return Sample(name, path, header[0] if header else "", header, _needs(header))


def all_samples() -> list[Sample]:
    """The default sample, then every script in :data:`SAMPLES_DIR` by name."""
    found = [_load(DEFAULT_NAME, DEFAULT_SCRIPT)] if DEFAULT_SCRIPT.is_file() else []
    found += [_load(p.stem, p) for p in sorted(SAMPLES_DIR.glob("*.py")) if not p.name.startswith("_")]
    return found


class UnknownSample(LookupError):
    """No installed sample has that name; the message lists them (and the nearest match)."""


def find_sample(name: str) -> Sample:
    samples = {s.name: s for s in all_samples()}
    key = name.removesuffix(".py")
    if key in samples:
        return samples[key]
    close = difflib.get_close_matches(key, samples, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise UnknownSample(f"no sample named {name!r}; {hint}the samples are: {', '.join(samples)} "
                        "(maixemu samples lists them)")


def format_list(samples: list[Sample]) -> str:
    width = max((len(s.name) for s in samples), default=0)
    lines = []
    for s in samples:
        needs = "runs as is" if s.runs_as_is else "needs " + ", ".join(s.needs)
        lines.append(f"{s.name:<{width}}  {s.summary}  [{needs}]")
    lines.append("")
    lines.append("maixemu run --sample NAME runs one; maixemu samples NAME shows its path and how to run it.")
    return "\n".join(lines)


def format_one(sample: Sample) -> str:
    lines = [f"{sample.name}: {sample.path}", ""]
    lines += [f"  {line}" for line in sample.header]
    lines.append("")
    if sample.runs_as_is:
        lines.append(f"run it:  maixemu run --sample {sample.name}")
    else:
        lines.append(f"run it:  maixemu run --sample {sample.name} with the options its header gives "
                     f"(it needs {', '.join(sample.needs)})")
    lines.append(f"copy it: cp {shlex.quote(str(sample.path))} .")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show this sample's path, header and run command")


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        print(format_list(all_samples()))
        return 0
    try:
        print(format_one(find_sample(args.name)))
    except UnknownSample as exc:
        print(f"maixemu samples: {exc}", file=sys.stderr)
        return 2
    return 0
