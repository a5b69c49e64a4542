"""A private Xvfb server and whole-screen screenshots, for the tests that open real OpenCV windows.

Needs the Debian packages ``xvfb`` (Xvfb) and ``x11-apps`` (``xwd``, whose dump is decoded here);
ImageMagick's ``import`` is used when ``xwd`` is missing. The fixtures skip with that reason when
they are missing.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

PACKAGES_HINT = "install the Debian packages xvfb x11-apps"


def require_screenshot_tool() -> None:
    if not (shutil.which("xwd") or shutil.which("import")):
        pytest.skip(f"no screenshot tool (xwd or ImageMagick import); {PACKAGES_HINT}")


def read_xwd(path: Path) -> np.ndarray:
    """RGB of an ``xwd -root`` dump (ZPixmap, TrueColor, 24/32 bits per pixel)."""
    data = path.read_bytes()
    h = np.frombuffer(data[:100], dtype=">u4")
    header_size, fmt, width, height = int(h[0]), int(h[2]), int(h[4]), int(h[5])
    byte_order, bpp, bytes_per_line, ncolors = int(h[7]), int(h[11]), int(h[12]), int(h[19])
    masks = [int(m) for m in h[14:17]]
    assert fmt == 2 and bpp in (24, 32), f"unsupported xwd dump: format {fmt}, {bpp} bits per pixel"
    start = header_size + 12 * ncolors
    rows = np.frombuffer(data[start : start + height * bytes_per_line], np.uint8).reshape(height, bytes_per_line)
    step = bpp // 8
    px = rows[:, : width * step].reshape(height, width, step).astype(np.uint32)
    if byte_order == 0:  # LSBFirst
        value = sum(px[..., i] << (8 * i) for i in range(step))
    else:
        value = sum(px[..., i] << (8 * (step - 1 - i)) for i in range(step))
    out = []
    for mask in masks:
        shift = (mask & -mask).bit_length() - 1
        out.append(((value & mask) >> shift).astype(np.uint8))
    return np.stack(out, axis=-1)


def take_screenshot(display: str, tmp_path: Path) -> np.ndarray | None:
    """The whole X screen as RGB, or None when no screenshot tool is installed."""
    if shutil.which("xwd"):
        out = tmp_path / "screen.xwd"
        subprocess.run(["xwd", "-root", "-silent", "-display", display, "-out", str(out)],
                       check=True, timeout=30, capture_output=True)
        return read_xwd(out)
    if shutil.which("import"):
        out = tmp_path / "screen.png"
        subprocess.run(["import", "-display", display, "-window", "root", f"png:{out}"],
                       check=True, timeout=30, capture_output=True)
        return cv2.imread(str(out), cv2.IMREAD_COLOR)[:, :, ::-1]
    return None


@contextlib.contextmanager
def xvfb_server(width: int = 800, height: int = 600):
    """A private Xvfb (a ``width`` x ``height`` screen) on a free display number (``-displayfd``), stopped afterwards."""
    exe = shutil.which("Xvfb")
    if exe is None:
        pytest.skip(f"Xvfb is not installed; {PACKAGES_HINT}")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [exe, "-displayfd", str(write_fd), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 15)
        number = os.read(read_fd, 32).decode().strip() if ready else ""
        if not number:
            proc.kill()
            err = proc.communicate(timeout=5)[1].decode(errors="replace")
            pytest.fail(f"Xvfb did not start: {err.strip()[-500:]}")
        yield f":{number}"
    finally:
        os.close(read_fd)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
