"""``maixemu run --show-ai``: a second window with the AI buffers the KPU read, next to the LCD.

On the K210 the KPU never sees an image's pixels, only its separate planar RGB888 "AI memory"
(see the README's pix_to_ai lesson). The bug that follows — the KPU reading a stale or black AI
buffer while the LCD shows the right picture — is invisible on the device. This view makes it
visible: with every LCD frame it shows, side by side, each AI buffer the KPU read since the
previous LCD frame (``kpu.forward``, ``kpu.run_yolo2``, ``KPU.run_with_output``), captioned with
the call. When the KPU has read nothing yet it shows the last snapshot's AI buffer instead.

The view is any display sink (``window``, ``record:DIR`` for PNGs, ``record:X.mp4``, ``none``), so it
can be checked headless in CI. It is a service of the board (:func:`ai_view_service`), fed by two of
the board's event hooks: ``kpu_input`` (which buffer the KPU read) and ``lcd_shown`` (a frame went
to the LCD's sink).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from ..host import display

AI_WINDOW_TITLE = "maixemu AI buffer (what the KPU reads)"
#: Height of the caption strip above each panel, and the gap between panels.
CAPTION_H = 16
GAP = 4
GAP_COLOUR = (40, 40, 40)
#: Small buffers (an MNIST 28x28) are enlarged by an integer factor up to at least this height.
MIN_PANEL_H = 112


def chw_to_rgb(ai: np.ndarray) -> np.ndarray:
    """A planar (C, H, W) uint8 AI buffer as an (H, W, 3) RGB picture (1 plane → gray)."""
    arr = np.asarray(ai, dtype=np.uint8)
    while arr.ndim > 3 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim == 2:
        arr = arr[None]
    if arr.shape[0] == 1:
        arr = np.repeat(arr, 3, axis=0)
    return np.ascontiguousarray(arr[:3].transpose(1, 2, 0))


def compose(panels: list[tuple[str, np.ndarray]]) -> np.ndarray:
    """Panels side by side, each under a caption strip, small ones enlarged (nearest neighbour)."""
    scaled = []
    for caption, rgb in panels:
        zoom = max(1, -(-MIN_PANEL_H // rgb.shape[0]))
        if zoom > 1:
            rgb = np.repeat(np.repeat(rgb, zoom, axis=0), zoom, axis=1)
        scaled.append((caption, rgb))
    height = CAPTION_H + max(rgb.shape[0] for _, rgb in scaled)
    width = sum(rgb.shape[1] for _, rgb in scaled) + GAP * (len(scaled) - 1)
    picture = np.zeros((height, width, 3), np.uint8)
    picture[:] = GAP_COLOUR
    x = 0
    for caption, rgb in scaled:
        h, w = rgb.shape[:2]
        picture[:CAPTION_H, x : x + w] = 0
        cv2.putText(picture, caption[: max(1, w // 7)], (x + 2, CAPTION_H - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.38,
                    (255, 255, 0), 1, cv2.LINE_AA)
        picture[CAPTION_H : CAPTION_H + h, x : x + w] = rgb
        x += w + GAP
    return picture


class AiView:
    """Collects the AI buffers the KPU reads and shows them once per LCD frame on ``sink``."""

    def __init__(self, sink: display.DisplaySink):
        self.sink = sink
        self._pending: list[tuple[str, np.ndarray]] = []
        self._last_kpu: list[tuple[str, np.ndarray]] = []

    def on_kpu_input(self, ai: np.ndarray, call: str) -> None:
        self._pending.append((f"{call} #{len(self._pending) + 1}", chw_to_rgb(ai)))  # a copy: the image lives on

    def on_lcd_frame(self) -> None:
        if self._pending:
            self._last_kpu, self._pending = self._pending, []
            panels = self._last_kpu
        elif self._last_kpu:
            panels = self._last_kpu
        else:
            snapshot = _snapshot_ai()
            if snapshot is None:
                return
            panels = [("last snapshot (no KPU call yet)", chw_to_rgb(snapshot))]
        self.sink.show(compose(panels))


def _snapshot_ai() -> np.ndarray | None:
    """The main frame buffer's AI memory (what ``sensor.snapshot()`` filled), if a frame was taken."""
    from ..firmware.state import current

    frame = current().framebuffer
    if frame is None:
        return None
    return frame._ai_array()


def open_ai_sink(spec: str, on_notice: Callable[[str], None], *, beside: str | None = None,
                 overwrite: bool = False) -> display.DisplaySink | None:
    """The sink of ``--show-ai SPEC``; a window that cannot open falls back to nothing, with a notice.
    ``beside``: the LCD window's title, to open the AI window next to it rather than on top of it."""
    text = (spec or "window").strip()
    if text.lower() in ("window", "auto"):
        try:
            return display.WindowSink(title=AI_WINDOW_TITLE, beside=beside)
        except display.DisplayError as exc:
            on_notice(f"--show-ai: {exc}; use --show-ai record:FOLDER to save the AI view instead")
            return None
    try:
        return display.open_sink(text, on_notice=on_notice, overwrite=overwrite)
    except display.DisplayError as exc:
        raise display.DisplayError(f"--show-ai {text}: {exc}".replace("--lcd", "--show-ai")) from None


def ai_view_service(spec: str) -> Callable[[Any], Callable[[], None] | None]:
    """The ``--show-ai SPEC`` service for :meth:`maixemu.session.Board.attach`."""

    def attach(board: Any) -> Callable[[], None] | None:
        window = board.state.display
        while isinstance(window, display.SinkWrapper):  # the board's display (and views) wrap the LCD's window
            window = window.inner
        sink = open_ai_sink(spec, board.notice, beside=getattr(window, "title", None),
                            overwrite=board.spec.overwrite)
        if sink is None:
            return None
        view = AiView(sink)
        events = board.state.events
        on_shown = lambda rgb: view.on_lcd_frame()  # noqa: E731
        events.kpu_input.append(view.on_kpu_input)
        events.lcd_shown.append(on_shown)

        def detach() -> None:
            for listeners, hook in ((events.kpu_input, view.on_kpu_input), (events.lcd_shown, on_shown)):
                if hook in listeners:
                    listeners.remove(hook)
            sink.close()

        return detach

    return attach
