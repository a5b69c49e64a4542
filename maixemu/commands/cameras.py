"""List the webcams OpenCV can open here: index, size, frame rate, backend (for --camera N).

Each index is opened and one frame read, bounded in time (a camera in use by another program, or
a hung driver, is said so instead of hanging). On Linux the /dev/videoN nodes are tried; elsewhere
indices 0, 1, ... until two in a row open nothing. Exit 0 when one delivers frames, 1 when none.
"""

from __future__ import annotations

import argparse
import sys

from ..host import webcams
from ..host.camera import CAMERA_HINT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max", type=int, default=16, metavar="N",
                        help=f"try indices below N (default 16, at most {webcams.MAX_INDICES})")
    parser.add_argument("--timeout", type=float, default=webcams.PROBE_TIMEOUT_S, metavar="S",
                        help=f"seconds each camera may take to open and give a frame (default {webcams.PROBE_TIMEOUT_S:g})")


def describe(cam: webcams.Webcam) -> str:
    where = f" ({cam.node})" if cam.node else ""
    if not cam.usable:
        return f"  {cam.index:>2}{where}: {cam.note or 'does not open'}"
    rate = f", {cam.fps:g} fps" if cam.fps > 0 else ""
    backend = f", {cam.backend}" if cam.backend else ""
    return f"  {cam.index:>2}{where}: {cam.width}x{cam.height}{rate}{backend}  ->  --camera {cam.index}"


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.max <= webcams.MAX_INDICES:
        print(f"maixemu cameras: --max must be 1..{webcams.MAX_INDICES}, not {args.max}", file=sys.stderr)
        return 2
    if not 0 < args.timeout <= 600:
        print(f"maixemu cameras: --timeout must be seconds in (0, 600], not {args.timeout:g}", file=sys.stderr)
        return 2
    usable = 0
    seen = 0
    for cam in webcams.list_webcams(args.max, args.timeout):
        if seen == 0:
            print("webcams (index: what it gives):")
        seen += 1
        usable += cam.usable
        print(describe(cam), flush=True)
    if usable:
        return 0
    where = "no /dev/video* node" if seen == 0 else "none delivered a frame"
    print(f"no webcam found ({where}); without one, {CAMERA_HINT}")
    return 1
