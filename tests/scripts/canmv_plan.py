"""Staging and judging one row of ``../shared/scripts/canmv_examples/plan.json`` (shared by the CanMV tests).

A row's ``files`` go into a fresh ``/sd`` under their names (sub-folders included), ``flash`` is
mapped, ``args`` are parsed by ``maixemu run``'s own argument parser, and the script runs in-process
through the pytest plugin's runner with a frame budget.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from conftest import SHARED_DIR

CORPUS = SHARED_DIR / "scripts" / "canmv_examples"
PLAN = CORPUS / "plan.json"
DATA = CORPUS / "_data" / "camera"
DEFAULT_FRAMES = 10
DEFAULT_TIMEOUT_S = 120.0

#: Camera folders for scripts that need something particular in view; the rest see ../shared/images.
CAMERAS = {
    "99-KPU/mnist/": DATA / "digits",
    "licenseplate_recognization/": DATA / "plates",
    "16-Codes/qrcodes": DATA / "qrcode",
}


_FOREVER = re.compile(r"^\s*while\s*\(?\s*(True|1)\s*\)?\s*:", re.MULTILINE)


def _plan_rows() -> list[dict]:
    if not PLAN.is_file():
        return []
    return json.loads(PLAN.read_text(encoding="utf-8"))["scripts"]


ROWS = {row["script"]: row for row in _plan_rows()}


def _shared(ref: str) -> Path:
    return SHARED_DIR / ref[2:] if ref.startswith("S:") else CORPUS / ref


def _run_args(args: list[str]) -> argparse.Namespace:
    """The plan's ``args`` through ``maixemu run``'s own parser (a plan option it lacks fails here)."""
    from maixemu.cli import add_run_arguments

    parser = argparse.ArgumentParser(prog="maixemu run", exit_on_error=False)
    add_run_arguments(parser)
    parsed = parser.parse_args(["script.py", *args])
    handled = {"frames", "timeout", "camera", "firmware", "ai_memory"}
    unused = [key for key, value in vars(parsed).items()
              if key not in handled | {"script"} and value not in (None, False, [], parser.get_default(key))]
    assert not unused, f"the table test does not pass on plan options {unused}; add them to run_plan_row"
    return parsed


def run_plan_row(row: dict, maixpy, *, keys=None, camera=None, frames=None, keep_lcd=2, clock=None):
    """Stage and run one plan row in-process; returns the ``RunResult``."""
    script = CORPUS / row["script"]
    options = _run_args(row.get("args", []))
    if camera is None:
        camera = options.camera or next((c for part, c in CAMERAS.items() if part in row["script"]),
                                        SHARED_DIR / "images")
    files = {f"/sd/{name}": _shared(ref) for name, ref in row.get("files", {}).items()}
    flash = {int(addr, 16): _shared(ref) for addr, ref in row.get("flash", {}).items()}
    return maixpy.run(
        script, camera=camera, frames=frames or options.frames or DEFAULT_FRAMES, timeout=options.timeout or DEFAULT_TIMEOUT_S,
        files=files, flash=flash, firmware=options.firmware, ai_memory=options.ai_memory, keys=keys,
        keep_lcd=keep_lcd, clock=clock,
    )


def outcome(row: dict, result) -> tuple[bool, str]:
    """(as expected?, why not) for the plan's ``expect``."""
    output = result.stdout + result.stderr
    expect = row["expect"]
    if expect.startswith("error:"):
        text = expect[len("error:"):]
        return text in output, f"expected {text!r} in the output"
    if result.exit_code != 0:
        return False, f"exit code {result.exit_code}"
    if "Traceback" in result.stderr:
        return False, "a traceback"
    loops_forever = bool(_FOREVER.search((CORPUS / row["script"]).read_text(encoding="utf-8", errors="replace")))
    if loops_forever and not result.budget_spent:
        return False, "the script's endless loop ended before the frame budget (an error it caught and printed?)"
    return True, ""
