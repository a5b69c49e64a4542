"""Where ``--show-ai``'s window goes next to the LCD window (maixemu.host.screens.place_beside)."""

from __future__ import annotations

from maixemu.host.screens import Rect, monitors, place_beside

LAPTOP = [Rect(0, 0, 1280, 800)]
LCD = Rect(0, 0, 640, 480)
AI = (648, 264)


def test_beside_when_it_fits():
    assert place_beside(LCD, AI, 16, [Rect(0, 0, 1920, 1080)]) == (656, 0)


def test_under_on_a_1280_pixel_screen():
    assert place_beside(LCD, AI, 16, LAPTOP) == (0, 496)


def test_at_the_edge_when_neither_fits():
    assert place_beside(LCD, AI, 16, [Rect(0, 0, 1024, 600)]) == (1024 - 648, 0)


def test_the_screen_of_the_first_window_counts():
    two = [Rect(0, 0, 1280, 800), Rect(1280, 0, 1920, 1080)]
    assert place_beside(Rect(1280, 0, 640, 480), AI, 16, two) == (1936, 0)


def test_no_screen_known_means_beside_as_before():
    assert place_beside(LCD, AI, 16, []) == (656, 0)


def test_monitors_never_raise():
    assert all(isinstance(screen, Rect) for screen in monitors())
