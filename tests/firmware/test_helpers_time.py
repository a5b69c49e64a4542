"""utime: clock fps/avg arithmetic pinned with an injected ms source, ticks wraparound, RTC/epoch 2000."""

from __future__ import annotations

import math

import numpy as np
import pytest

from maixemu.firmware import utime


@pytest.fixture()
def ms(monkeypatch):
    """A settable "milliseconds since boot" source for utime."""
    now = {"ms": 0}
    monkeypatch.setattr(utime, "_now_ns", lambda: now["ms"] * 1_000_000)
    monkeypatch.setattr(utime, "_sleep_ns", lambda ns: now.__setitem__("ms", now["ms"] + ns // 1_000_000))
    return now


def f32_fps(ticks: int, frames: int) -> float:
    """The firmware's ``1000.0f / (t_ticks / (float)t_frame)``, computed independently with numpy."""
    with np.errstate(divide="ignore"):
        return float(np.float32(1000.0) / (np.float32(ticks) / np.float32(frames)))


def f32_avg(ticks: int, frames: int) -> float:
    return float(np.float32(ticks) / np.float32(frames))


def test_fps_single_frame_exact(ms):
    clock = utime.clock()
    ms["ms"] = 1000
    clock.tick()
    ms["ms"] = 1040
    assert clock.fps() == 25.0
    assert (clock.t_start, clock.t_ticks, clock.t_frame) == (1000, 40, 1)


def test_fps_accumulates_over_frames_in_float32(ms):
    clock = utime.clock()
    ms["ms"] = 1000
    clock.tick()
    ms["ms"] = 1040
    clock.fps()
    clock.tick()
    ms["ms"] = 1090  # second frame 50 ms: ticks 90, frames 2 -> 1000 / 45
    value = clock.fps()
    assert value == f32_fps(90, 2)
    assert value == pytest.approx(22.2222222, rel=1e-7)
    assert value != 1000 / 45  # float32, not float64


def test_fps_resets_once_ticks_reach_2000(ms):
    clock = utime.clock()
    ms["ms"] = 0
    for frame in range(20):  # 20 frames of 100 ms: ticks reach 2000 on the 20th
        clock.tick()
        ms["ms"] += 100
        value = clock.fps()
    assert value == f32_fps(2000, 20) == 10.0
    assert (clock.t_ticks, clock.t_frame) == (0, 0)
    clock.tick()
    ms["ms"] += 40
    assert clock.fps() == 25.0  # the first value after a reset is one frame's


def test_fps_just_below_2000_does_not_reset(ms):
    clock = utime.clock()
    clock.tick()
    ms["ms"] = 1999
    clock.fps()
    assert (clock.t_ticks, clock.t_frame) == (1999, 1)


def test_fps_is_inf_for_a_sub_millisecond_frame(ms):
    clock = utime.clock()
    ms["ms"] = 500
    clock.tick()
    assert clock.fps() == math.inf


def test_fps_without_tick_uses_time_since_boot(ms):
    clock = utime.clock()
    ms["ms"] = 5000
    value = clock.fps()
    assert value == f32_fps(5000, 1) == float(np.float32(0.2))
    assert (clock.t_ticks, clock.t_frame) == (0, 0)  # 5000 >= 2000: reset


def test_avg_is_ms_per_frame_and_never_resets(ms):
    clock = utime.clock()
    for step in (50, 70, 3000):
        clock.tick()
        ms["ms"] += step
        value = clock.avg()
    assert value == f32_avg(3120, 3) == 1040.0
    assert (clock.t_ticks, clock.t_frame) == (3120, 3)
    clock.tick()
    ms["ms"] += 1
    assert clock.avg() == f32_avg(3121, 4)


def test_clock_counters_are_uint32(ms):
    clock = utime.clock()
    ms["ms"] = 2**32 + 10
    clock.tick()
    assert clock.t_start == 10
    ms["ms"] = 2**32 + 30
    assert clock.fps() == 50.0


def test_clock_reset_and_print_format(ms):
    clock = utime.clock()
    assert str(clock) == "t_start:0 t_ticks:0 t_frame:0\n"
    ms["ms"] = 123
    clock.tick()
    ms["ms"] = 150
    clock.avg()
    assert str(clock) == "t_start:123 t_ticks:27 t_frame:1\n"
    assert repr(clock) == str(clock)
    clock.reset()
    assert (clock.t_start, clock.t_ticks, clock.t_frame) == (0, 0, 0)


def test_ticks_from_boot_and_sleep(ms):
    ms["ms"] = 1234
    assert utime.ticks_ms() == 1234
    assert utime.ticks() == 1234
    assert utime.ticks_us() == 1_234_000
    assert utime.ticks_cpu() == 1234 * 400_000
    utime.sleep_ms(100)
    utime.sleep_us(5000)
    utime.sleep(0.5)
    assert utime.ticks_ms() == 1234 + 100 + 5 + 500


def test_ticks_wrap_period_is_the_64bit_small_int_range(ms):
    period = utime.TICKS_PERIOD
    assert period == 2**62
    ms["ms"] = period + 7  # the counter itself wraps
    assert utime.ticks_ms() == 7
    assert utime.ticks_diff(5, period - 3) == 8
    assert utime.ticks_diff(period - 3, 5) == -8
    assert utime.ticks_diff(100, 40) == 60
    assert utime.ticks_add(period - 1, 2) == 1
    assert utime.ticks_add(1, -3) == period - 2
    assert utime.ticks_diff(utime.ticks_add(period - 10, 25), period - 10) == 25


def test_ms_functions_take_ints_only(ms):
    with pytest.raises(TypeError, match="can't convert float to int"):
        utime.sleep_ms(1.5)
    with pytest.raises(TypeError):
        utime.ticks_diff(1.0, 2)


def test_localtime_doc_example():
    assert utime.localtime(546450051) == (2017, 4, 25, 15, 40, 51, 1, 115)
    assert utime.localtime(0) == (2000, 1, 1, 0, 0, 0, 5, 1)
    assert utime.localtime(86400 * 366) == (2001, 1, 1, 0, 0, 0, 0, 1)  # 2000 is a leap year


def test_mktime_inverse_and_normalisation():
    assert utime.mktime((2017, 4, 25, 15, 40, 51, 1, 115)) == 546450051
    assert utime.mktime((2017, 4, 25, 15, 40, 51, 1, 115, 0)) == 546450051
    # overflowing fields carry like MicroPython's timeutils_mktime
    assert utime.mktime((2017, 4, 24, 39, 40, 51, 0, 0)) == 546450051
    assert utime.mktime((2016, 16, 25, 15, 40, 51, 0, 0)) == 546450051
    assert utime.mktime((2017, 5, -5, 15, 40, 51, 0, 0)) == 546450051
    with pytest.raises(TypeError, match=r"mktime needs a tuple of length 8 or 9 \(6 given\)"):
        utime.mktime((2017, 4, 25, 15, 40, 51))


def test_rtc_starts_at_zero_and_set_time_keeps_ticking(ms):
    ms["ms"] = 74_000  # the test's board was just powered on: its RTC is unset
    assert utime.time() == 74
    assert utime.set_time((2017, 4, 25, 15, 40, 51, 1, 115)) is True
    assert utime.time() == 546450051
    utime.sleep(1)
    assert utime.localtime(utime.time()) == (2017, 4, 25, 15, 40, 52, 1, 115)
    # the RTC path reports the SDK's weekday, Sunday = 0 (Tuesday = 2)
    assert utime.localtime() == (2017, 4, 25, 15, 40, 52, 2, 115)
    assert utime.set_time((2017, 2, 30, 0, 0, 0)) is False
    assert utime.set_time((2017, 1, 1, 24, 0, 0)) is False


def test_cpython_time_functions_remain():
    assert utime.perf_counter() > 0
    assert callable(utime.monotonic)
    assert utime.strftime("%Y-%m-%d", (2017, 4, 25, 15, 40, 51, 1, 115)) == "2017-04-25"
    with pytest.raises(AttributeError):
        utime.no_such_function  # noqa: B018


def test_a_virtual_clock_installs_and_restores(board_state):
    fake = {"ns": 5_000_000}
    board_state.clock.use(lambda: fake["ns"], lambda ns: fake.__setitem__("ns", fake["ns"] + ns))
    assert utime.ticks_ms() == 5
    utime.sleep_ms(10)
    assert utime.ticks_ms() == 15
    board_state.clock.use()
    assert utime.ticks_ms() < 5_000  # real time since the board's power-on again


def test_every_board_boots_with_its_own_clock_and_rtc(board_state):
    from maixemu.firmware.state import BoardState, activate, deactivate

    utime.set_time((2017, 4, 25, 15, 40, 51))
    assert utime.time() >= 546450051
    fresh = BoardState()
    activate(fresh)
    try:
        assert utime.time() < 5 and utime.ticks_ms() < 5_000  # a power-on: RTC unset, ticks from 0
    finally:
        deactivate(fresh)
    assert utime.time() >= 546450051
