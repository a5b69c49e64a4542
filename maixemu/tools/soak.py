"""Soak benchmark: run the face-detection sample for thousands of frames and watch memory.

``python -m maixemu.tools.soak --frames 5000`` runs ``samples/face_detect.py`` in this process (the
way ``maixemu run`` does, through :func:`maixemu.session.execute`) on a looping folder of pictures,
with no LCD output, and samples the process's resident memory every ``--every`` frames from
``/proc/self/statm``. Why in-process: a leak in the firmware modules, the KPU engine or the frame
path shows up as RSS growth of *this* process; a subprocess would only add noise.

The first ``--warmup`` frames are excluded from the verdict (caches fill, numpy allocates its
pools, the model's arenas are created). The run fails (exit 1) when RSS grew by more than
``--max-growth-mb`` between the warm-up sample and the end.

While it runs, a progress bar on stderr shows the frames, their rate, the time left and the last
RSS sample (in a log, where a live bar would fill it with carriage returns, one such line every
``--progress-every`` seconds).

Needs ``../shared`` (next to the repository) for the face model and photos; without it the bundled
default sample (maixemu's own edge-filter model) runs on synthetic frames instead, and says so.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..progress import LOG_EVERY_S, progress_bar
from ..session import Board, Plugs, RunSpec, execute
from ..session.run import default_sample

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DIR = REPO_ROOT.parent / "shared"
FACE_SCRIPT = REPO_ROOT / "samples" / "face_detect.py"
FACE_MODEL = SHARED_DIR / "models" / "v3" / "face_detect_320x240.kmodel"
PHOTOS = SHARED_DIR / "images"
FACE_ADDRESS = 0x300000
MB = 1024 * 1024


def rss_bytes() -> int:
    """Resident set size of this process (``/proc/self/statm`` field 2, in pages)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Sample:
    frame: int
    seconds: float
    rss: int


@dataclass
class SoakResult:
    """What a soak run measured; ``samples`` holds one entry per ``every`` frames plus the end."""

    script: Path
    frames: int
    warmup: int
    exit_code: int
    samples: list[Sample] = field(default_factory=list)

    def at(self, frame: int) -> Sample:
        """The first sample taken at or after ``frame``."""
        return next((s for s in self.samples if s.frame >= frame), self.samples[-1])

    @property
    def end(self) -> Sample:
        return self.samples[-1]

    @property
    def growth(self) -> int:
        """RSS growth in bytes from the warm-up sample to the end."""
        return self.end.rss - self.at(self.warmup).rss

    def fps(self, start_frame: int = 0) -> float:
        first = self.at(start_frame) if start_frame else Sample(0, 0.0, 0)
        frames = self.end.frame - first.frame
        seconds = self.end.seconds - first.seconds
        return frames / seconds if seconds > 0 else 0.0


def _synthetic_folder(folder: Path, count: int = 12) -> Path:
    """A few frames of the synthetic pattern as PNGs: the folder source the fallback loops over."""
    import cv2

    from ..host.camera import SyntheticSource

    source = SyntheticSource()
    for n in range(count):
        cv2.imwrite(str(folder / f"frame_{n:03d}.png"), cv2.cvtColor(source.frame(n * 7), cv2.COLOR_RGB2BGR))
    return folder


def choose_workload(tmp: Path, notice=print) -> tuple[Path, dict[int, Path], Path]:
    """(script, flash map, camera folder): the face detector on ../shared photos, or the fallback."""
    if FACE_MODEL.is_file() and PHOTOS.is_dir() and FACE_SCRIPT.is_file():
        return FACE_SCRIPT, {FACE_ADDRESS: FACE_MODEL}, PHOTOS
    notice(f"soak: {SHARED_DIR} is absent: running the bundled default sample on synthetic frames instead "
           "of samples/face_detect.py")
    return default_sample(), {}, _synthetic_folder(tmp)


def soak(frames: int, *, every: int = 250, warmup: int = 500, notice=print, progress_stream: Any = None,
         progress_every: float = LOG_EVERY_S) -> SoakResult:
    """Run the workload for ``frames`` camera frames and sample RSS every ``every`` frames.

    ``progress_stream``: where the progress bar goes (None: no bar); in a log (not a terminal) one
    line every ``progress_every`` seconds.
    """
    with tempfile.TemporaryDirectory(prefix="maixemu-soak-") as tmp:
        script, flash, folder = choose_workload(Path(tmp), notice)
        # the sample prints nothing, but a script's print must not flood the report
        out, err = io.StringIO(), io.StringIO()
        result = SoakResult(script=script, frames=frames, warmup=warmup, exit_code=0)
        taken = 0
        started = time.perf_counter()
        bar = progress_bar(frames, "soak", "frame", log_every=progress_every, stream=progress_stream,
                           disable=progress_stream is None)

        def sample() -> None:  # after the budget's own count: a frame past the budget never gets here
            nonlocal taken
            taken += 1
            if taken <= frames:
                bar.update(1)
            if taken % every == 0 and taken <= frames:
                result.samples.append(Sample(taken, time.perf_counter() - started, rss_bytes()))
                base = result.at(warmup).rss if taken >= warmup else result.samples[0].rss
                bar.set_postfix_str(f"RSS {result.samples[-1].rss / MB:.1f} MB "
                                    f"({(result.samples[-1].rss - base) / MB:+.1f} since "
                                    f"{'warm-up' if taken >= warmup else 'start'})", refresh=False)

        def watch(board: Board) -> None:
            board.state.events.snapshot.append(sample)

        result.samples.append(Sample(0, 0.0, rss_bytes()))
        spec = RunSpec(camera=str(folder), lcd="none", flash=flash, frames=frames, quiet=True)
        try:
            record = execute(spec, script, plugs=Plugs(stdout=out, stderr=err), services=[watch])
        finally:
            bar.close()
        result.exit_code = record.exit_code
        done = min(record.budget.snapshots, frames)
        if result.samples[-1].frame != done:  # the run ended between two samples
            result.samples.append(Sample(done, time.perf_counter() - started, rss_bytes()))
        errors = err.getvalue().strip()
        if result.exit_code != 0 and errors:
            notice(errors)
    return result


def report(result: SoakResult, max_growth_mb: float) -> tuple[str, bool]:
    """The human-readable report and whether the run passed."""
    warm = result.at(result.warmup)
    lines = [
        f"soak: {result.script.name}, {result.end.frame} frames in {result.end.seconds:.1f} s "
        f"({result.fps():.1f} frames/s overall, {result.fps(result.warmup):.1f} frames/s after warm-up)",
        f"RSS at start {result.samples[0].rss / MB:.1f} MB, at warm-up (frame {warm.frame}) {warm.rss / MB:.1f} MB, "
        f"at the end (frame {result.end.frame}) {result.end.rss / MB:.1f} MB: "
        f"{result.growth / MB:+.1f} MB after warm-up (limit {max_growth_mb:g} MB)",
        "samples (frame: MB): " + ", ".join(f"{s.frame}: {s.rss / MB:.1f}" for s in result.samples),
    ]
    ok = result.exit_code == 0 and result.growth <= max_growth_mb * MB
    if result.exit_code != 0:
        lines.append(f"FAIL: the script ended with exit code {result.exit_code}")
    elif not ok:
        lines.append(f"FAIL: RSS grew by {result.growth / MB:.1f} MB after warm-up")
    else:
        lines.append("PASS")
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maixemu.tools.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=5000, help="camera frames to run (default 5000)")
    parser.add_argument("--every", type=int, default=250, help="sample RSS every N frames (default 250)")
    parser.add_argument("--warmup", type=int, default=500, help="frames before the RSS baseline (default 500)")
    parser.add_argument("--max-growth-mb", type=float, default=20.0, help="allowed RSS growth after warm-up")
    parser.add_argument("--progress-every", type=float, default=LOG_EVERY_S, metavar="S",
                        help=f"in a log (stderr not a terminal), a progress line every S seconds (default {LOG_EVERY_S:g})")
    args = parser.parse_args(argv)
    if args.frames <= args.warmup:
        parser.error("--frames must be larger than --warmup")
    if not Path("/proc/self/statm").exists():
        print("soak: /proc/self/statm is missing (Linux only)", file=sys.stderr)
        return 2
    if not args.progress_every > 0:
        parser.error("--progress-every must be seconds > 0")
    result = soak(args.frames, every=args.every, warmup=args.warmup,
                  notice=lambda message: print(message, file=sys.stderr), progress_stream=sys.stderr,
                  progress_every=args.progress_every)
    text, ok = report(result, args.max_growth_mb)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
