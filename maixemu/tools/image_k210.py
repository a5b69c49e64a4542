"""The K210's own time for ``image_bench`` cases, where the firmware documents one or users measured one.

Each :class:`K210Time` says what was timed, on which frame, and where the number comes from, so the
bench table can cite it. Only published numbers go here (never estimates of ours); a case without
one shows no K210 time. Keys are bench case names without the format, as in ``image_peers``;
``fmt`` restricts an entry to one format.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class K210Time:
    """``ms`` on the K210 (400 MHz, MaixPy-v1) for ``what``; ``at_least`` when the source times only
    part of the call (the whole call takes longer); ``frame`` when it was timed on another frame
    size than the bench's QVGA; ``source`` is where a reader can check it."""

    ms: float
    what: str
    source: str
    fmt: str | None = None
    at_least: bool = False
    frame: str = ""

    def label(self) -> str:
        return ("≥" if self.at_least else "") + f"{self.ms:g}" + (f" ({self.frame})" if self.frame else "")


HOUGH_C = "MaixPy-v1 components/micropython/port/src/omv/img/hough.c (imlib_find_lines, DBG_TIME comments)"
CONV_C = "MaixPy-v1 components/micropython/port/src/omv/img/conv.c (imlib_conv3, comment on the RGB565 loop)"

K210_TIMES: dict[str, K210Time] = {
    "find_lines()": K210Time(
        22.6, "accumulator clear 1.5 ms + Sobel/Hough votes on both cores 17.5 ms + peak scan 3.6 ms "
        "(the merge is not timed; the comment gives no frame size, QVGA is the firmware's default)",
        HOUGH_C, fmt="rgb565", at_least=True),
    "get_regression(thr)": K210Time(
        532, "a user's measurement on MaixPy-v1 (April 2019), RGB565; the bench's QVGA frame has 4x its pixels",
        "sipeed/MaixPy-v1 issue #54 (https://github.com/sipeed/MaixPy-v1/issues/54)", fmt="rgb565",
        frame="QQVGA"),
    "conv3(edge)": K210Time(
        2.6, "only the final RGB888-to-RGB565 loop of the KPU convolution", CONV_C, fmt="rgb565", at_least=True),
}


def k210_time(case_name: str, fmt: str) -> K210Time | None:
    """The K210 time of a bench case (``"find_lines() [rgb565]"``), if one is known for its format."""
    entry = K210_TIMES.get(case_name.rsplit(" [", 1)[0])
    if entry is None or (entry.fmt is not None and entry.fmt != fmt):
        return None
    return entry
