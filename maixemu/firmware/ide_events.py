"""What a connected IDE sees of a run: the firmware's IDE frame-buffer copy and the numbers the IDE shows.

On the board the IDE never reads the frame buffer itself. ``fb_update_jpeg_buffer()``
(``omv/framebuffer.c``) copies the main frame buffer, as it is at that moment, into the IDE's JPEG
buffer, and only while an IDE is connected with its frame-buffer view enabled. The firmware calls
it

* at the start of every ``sensor.snapshot()`` (unless ``update_jb=False``), *before* the new frame
  is captured, so the IDE shows the previous frame **with everything the script drew on it**;
* from ``sensor.flush()`` (``sensor_flush``: "use it when you don't snap for a while");
* from the ``copy_to_fb`` paths (``image.Image(copy_to_fb=True)``, ``img.copy(copy_to_fb=True)``,
  ``ImageReader.next_frame(copy_to_fb=True)``), again *before* they overwrite the frame buffer;

and never from ``lcd.display``. :func:`fb_update_jpeg_buffer` is that call; the firmware modules
above call it at those points. It costs nothing while nobody listens.

The other events feed the IDE page's board pane: the values a script's ``clock.fps()`` returned
and the models the KPU ran (for the device-time estimate per frame).

The listeners are the board's (``current().events``: ``framebuffer``, ``clock_fps``, ``kpu_call``);
they are called on the script's thread and must be quick.
"""

from __future__ import annotations

from typing import Any

from .state import BoardEvents, current


def fb_update_jpeg_buffer() -> None:
    """The firmware's ``fb_update_jpeg_buffer``: hand the IDE a copy of the main frame buffer now.

    Nothing happens while no listener is attached (no IDE connected), while the IDE's frame-buffer
    view is disabled (``events.framebuffer_enabled``, the firmware's ``JPEG_FB()->enabled``) or
    before the frame buffer was ever written (the board's frame buffer is empty then: the IDE shows
    nothing).
    """
    board = current()
    listeners = board.events.framebuffer
    if not listeners or not board.events.framebuffer_enabled:  # JPEG_FB()->enabled
        return
    frame = board.framebuffer
    if frame is None:
        return
    copy = type(frame)._wrap(frame._fmt, frame._pix.copy())
    BoardEvents.fire(listeners, copy)


def clock_fps(value: float) -> None:
    """A script's ``clock.fps()`` returned ``value``."""
    listeners = current().events.clock_fps
    if listeners:
        BoardEvents.fire(listeners, value)


def kpu_call(call: str, model: Any) -> None:
    """The KPU is about to run ``model`` for ``call`` (``kpu.forward``, ``kpu.run_yolo2``, ...)."""
    listeners = current().events.kpu_call
    if listeners:
        BoardEvents.fire(listeners, call, model)
