"""The progress bar: tqdm (rate and time left) when installed, else a line every few seconds."""

from __future__ import annotations

import sys
import time


class _Plain:
    def __init__(self, total: int, initial: int, disable: bool):
        self.total, self.n, self.disable = total, initial, disable
        self._start, self._last = time.monotonic(), 0.0

    def update(self, count: int) -> None:
        self.n += count
        now = time.monotonic()
        if not self.disable and (now - self._last > 5 or self.n >= self.total):
            self._last = now
            print(f"[maixemu] eval: {self.n}/{self.total} images", file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


def progress(total: int, initial: int, disable: bool):
    try:
        from tqdm import tqdm
    except ImportError:
        return _Plain(total, initial, disable)
    return tqdm(total=total, initial=initial, unit="img", desc="eval", disable=disable, file=sys.stderr,
                dynamic_ncols=True, smoothing=0.1)
