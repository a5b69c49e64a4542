"""Where a second window fits on the screen: beside the first one, else under it, else at the edge.

Why: ``--show-ai`` opens its window to the right of the LCD window so both stay visible; on a
1280-pixel laptop screen the 640-pixel LCD window and a 648-pixel AI view do not fit side by side,
and the AI window ran off the screen's right edge. OpenCV cannot tell the screen's size; the
``screeninfo`` library (X11 through Xrandr/Xinerama, Windows, macOS with pyobjc) can. When no
screen is known (no such library, a Wayland-only or macOS desktop without it) the window goes
beside the first one, as before.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    width: int
    height: int

    @property
    def right(self) -> int:
        return self.x + self.width

    @property
    def bottom(self) -> int:
        return self.y + self.height

    def contains(self, x: int, y: int) -> bool:
        return self.x <= x < self.right and self.y <= y < self.bottom


def monitors() -> list[Rect]:
    """The screens of the desktop ([] when they cannot be known)."""
    try:
        import screeninfo

        return [Rect(m.x, m.y, m.width, m.height) for m in screeninfo.get_monitors() if m.width > 0 and m.height > 0]
    except Exception:  # screeninfo missing, or no enumerator works here (its ScreenInfoError, a ctypes failure)
        return []


def place_beside(other: Rect, size: tuple[int, int], gap: int, screens: list[Rect]) -> tuple[int, int]:
    """Top-left corner for a window of ``size`` (width, height) next to window ``other``.

    To its right when that fits on ``other``'s screen, else under it, else as far right as the
    screen allows (overlapping ``other`` a little rather than running off the screen).
    """
    width, height = size
    right = (other.right + gap, other.y)
    screen = next((s for s in screens if s.contains(other.x, other.y)), screens[0] if screens else None)
    if screen is None or right[0] + width <= screen.right:
        return right
    if other.bottom + gap + height <= screen.bottom and other.x + width <= screen.right:
        return other.x, other.bottom + gap
    return max(screen.x, screen.right - width), other.y
