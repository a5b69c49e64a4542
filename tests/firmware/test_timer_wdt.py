"""``machine.Timer`` and ``machine.WDT`` on the board clock, delivered at soft-IRQ points.

Facts from MaixPy-v1 ``machine_timer.c`` / ``machine_wdt.c``: units count from ``UNIT_NS`` = 0
(``period * 1000**unit`` ns), every keyword after ``(id, channel)`` is keyword-only, a non-PWM timer
needs a callable callback, the ISR schedules ``callback(timer)``; the watchdog schedules its callback
at the first expiry and resets the board at the second. A virtual clock keeps these tests instant.
"""

from __future__ import annotations

import pytest

from maixemu.firmware import utime
from maixemu.firmware.machine import WDT, Timer
from maixemu.firmware.registry import ScriptReset


@pytest.fixture
def clock(board_state):
    now = [0]

    def sleep_ns(ns: int) -> None:
        now[0] += max(0, ns)

    board_state.clock.use(lambda: now[0], sleep_ns)
    return now


def test_constants_are_the_firmwares():
    assert (Timer.UNIT_NS, Timer.UNIT_US, Timer.UNIT_MS, Timer.UNIT_S) == (0, 1, 2, 3)
    assert (Timer.MODE_ONE_SHOT, Timer.MODE_PERIODIC, Timer.MODE_PWM) == (0, 1, 2)
    assert (WDT.WDT_DEVICE_0, WDT.WDT_DEVICE_1) == (0, 1)


def test_periodic_timer_fires_once_per_period_while_the_script_sleeps(clock):
    seen = []
    tim = Timer(Timer.TIMER0, Timer.CHANNEL0, mode=Timer.MODE_PERIODIC, period=10, unit=Timer.UNIT_MS,
                callback=lambda t: seen.append((t, utime.ticks_ms())), arg="ctx")
    utime.sleep_ms(105)
    assert len(seen) == 10
    assert seen[0][0] is tim  # one argument: the timer (mp_sched_schedule(callback, self))
    assert [ms for _, ms in seen][:3] == [seen[0][1], seen[0][1] + 10, seen[0][1] + 20]
    assert tim.callback_arg() == "ctx" and tim.period() == 10
    tim.stop()
    utime.sleep_ms(100)
    assert len(seen) == 10
    tim.start()
    utime.sleep_ms(25)
    assert len(seen) == 12


def test_one_shot_fires_once_and_restart_rearms(clock):
    seen = []
    tim = Timer(Timer.TIMER1, Timer.CHANNEL2, mode=Timer.MODE_ONE_SHOT, period=1, unit=Timer.UNIT_S,
                callback=seen.append)
    utime.sleep(3)
    assert seen == [tim]
    tim.restart()
    utime.sleep_ms(999)
    assert len(seen) == 1
    utime.sleep_ms(1)
    assert len(seen) == 2
    tim.deinit()


def test_start_false_and_period_change(clock):
    seen = []
    tim = Timer(Timer.TIMER2, Timer.CHANNEL3, mode=Timer.MODE_PERIODIC, period=500, unit=Timer.UNIT_US,
                callback=seen.append, start=False)
    utime.sleep_ms(5)
    assert seen == []
    tim.start()
    assert tim.period(2, Timer.UNIT_MS) == 2
    utime.sleep_ms(10)
    assert len(seen) == 5


def test_callbacks_run_only_at_soft_irq_points(clock, board_state):
    seen = []
    Timer(Timer.TIMER0, Timer.CHANNEL1, mode=Timer.MODE_ONE_SHOT, period=1, callback=seen.append)
    clock[0] += 5_000_000  # time passes in a loop that calls no firmware function
    assert seen == []
    board_state.checkpoint()
    assert len(seen) == 1


def test_argument_errors_are_the_firmwares():
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]Timer:Invalid timer$"):
        Timer(3, 0, callback=print)
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]Timer:Invalid timer$"):
        Timer(0, 4, callback=print)
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]Timer:Invalid callback$"):
        Timer(0, 0, mode=Timer.MODE_PERIODIC)
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]Timer:Invalid mode$"):
        Timer(0, 0, mode=3, callback=print)
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]Timer:Invalid priority$"):
        Timer(0, 0, callback=print, priority=8)
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]Timer:Invalid period or div$"):
        Timer(0, 0, callback=print, period=1, unit=Timer.UNIT_NS)  # under one count of 400 MHz
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]Timer:Invalid period or div$"):
        Timer(0, 0, callback=print, div=256)
    with pytest.raises(TypeError):
        Timer(0, 0, 0)  # mode is keyword-only
    with pytest.raises(ValueError, match="unit error"):
        Timer(0, 0, callback=print).period(1, 4)
    Timer(0, 0, mode=Timer.MODE_PWM)  # a PWM channel needs no callback


def test_exception_in_a_callback_is_printed_and_the_script_goes_on(clock, capsys):
    def broken(timer):
        raise ZeroDivisionError("divide by zero")

    Timer(0, 0, mode=Timer.MODE_ONE_SHOT, period=1, callback=broken)
    utime.sleep_ms(2)
    assert "ZeroDivisionError: divide by zero" in capsys.readouterr().out


def test_the_schedule_queue_holds_eight(clock, board_state):
    seen = []
    timers = [Timer(i // 4, i % 4, mode=Timer.MODE_ONE_SHOT, period=1, callback=seen.append) for i in range(12)]
    clock[0] += 2_000_000
    board_state.irq.poll_alarms()  # twelve ISRs before the VM gets to a pending check
    board_state.irq.run_pending()
    assert len(seen) == 8 and board_state.irq.dropped == 4
    del timers


def test_wdt_without_callback_resets_the_board_when_not_fed(clock, capsys):
    dog = WDT(id=0, timeout=100)
    for _ in range(5):
        utime.sleep_ms(90)
        dog.feed()
    with pytest.raises(ScriptReset):
        utime.sleep_ms(101)
    assert "WDT(0) was not fed for 100 ms" in capsys.readouterr().err


def test_wdt_callback_at_first_timeout_reset_at_second(clock):
    fed = []

    def feeder(wdt):
        fed.append(wdt.context())
        if len(fed) < 3:
            wdt.feed()

    WDT(id=1, timeout=50, callback=feeder, context="ctx")
    with pytest.raises(ScriptReset):
        utime.sleep(1)
    assert fed == ["ctx"] * 3  # fed twice; the third interrupt went unanswered: the reset 50 ms later
    assert utime.ticks_ms() - utime.BOOT_TO_MAIN_MS >= 0


def test_wdt_stop_and_errors(clock):
    dog = WDT(0, 10)
    dog.stop()
    utime.sleep_ms(100)  # stopped: no reset
    with pytest.raises(ValueError, match=r"^WDT\(2\) does not exist$"):
        WDT(2)
    with pytest.raises(ValueError, match="^WDT timeout too short$"):
        WDT(0, 0)


def test_wdt_reset_ends_a_run_cleanly(tmp_path):
    from maixemu.session import Board, BoardConfig, Plugs, RunSpec
    from maixemu.session.run import run_script

    script = tmp_path / "main.py"
    script.write_text("from machine import WDT\nimport time\nwdt = WDT(0, 200)\nprint('up')\n"
                      "while True:\n    time.sleep_ms(50)\n")
    now = [0]
    clock = (lambda: now[0], lambda ns: now.__setitem__(0, now[0] + ns))
    with Board(BoardConfig(RunSpec(camera="synthetic", lcd="none", quiet=True), project=tmp_path,
                           plugs=Plugs(clock=clock))) as board:
        outcome = run_script(script, board)
    assert outcome.exit_code == 0 and "watchdog" in (outcome.reason or "")
