"""Run a real MaixPy script through ``python -m maixemu run`` in a subprocess, as a user would.

A subprocess per script keeps the firmware modules' state (sensor, lcd, loaded models) from leaking
between scripts and exercises the real command line, exit codes included.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ScriptRun:
    returncode: int
    stdout: str
    stderr: str
    lcd_dir: Path

    @property
    def lcd_frames(self) -> list[Path]:
        return sorted(self.lcd_dir.glob("*.png")) if self.lcd_dir.is_dir() else []


def run_maixpy_script(
    script: Path,
    tmp: Path,
    *,
    camera: str | Path | None = None,
    frames: int = 30,
    timeout: float = 60,
    extra: list[str] | None = None,
) -> ScriptRun:
    """Run ``script`` with /sd and /flash in ``tmp`` (so writes never touch ../shared) and LCD PNGs."""
    sd = tmp / "sd"
    sd.mkdir(parents=True, exist_ok=True)
    lcd_dir = tmp / "lcd"
    args = [
        sys.executable, "-m", "maixemu", "run", str(script),
        "--sd", str(sd), "--flash-dir", str(sd),
        "--lcd", f"record:{lcd_dir}",
        "--frames", str(frames),
        "--timeout", str(timeout),
    ]
    if camera is not None:
        args += ["--camera", str(camera)]
    args += extra or []
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 60, env=env, stdin=subprocess.DEVNULL)
    return ScriptRun(proc.returncode, proc.stdout, proc.stderr, lcd_dir)
