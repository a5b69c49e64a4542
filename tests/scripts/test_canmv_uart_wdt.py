"""CanMV hardware demos that need the board's wiring: ``demo_uart_many.py`` with UART1's TX wired to
UART2's RX (``uart_loop=["1:2"]``, as ``--uart-loop 1:2``) shows its receive path; ``demo_wdt.py``
ends with the unfed watchdog's reset after its callbacks printed their contexts."""

from __future__ import annotations

import pytest

from canmv_plan import CORPUS

HARDWARE = CORPUS / "01-K210" / "50-Hardware"


def _script(name: str):
    path = HARDWARE / name
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared/scripts is absent)")
    return path


def test_demo_uart_many_receives_what_it_sends_over_the_loop(maixpy):
    result = maixpy.run(_script("demo_uart_many.py"), uart_loop=["1:2"], timeout=120)
    assert result.ok, result.stderr
    checks = [line for line in result.lines if line.endswith("---check Successfully")]
    assert len(checks) == 20
    assert result.uart_sent == {"UART1": b"hello world" * 20}


def test_demo_uart_many_unwired_writes_and_ends_silently(maixpy):
    result = maixpy.run(_script("demo_uart_many.py"), timeout=120)
    assert result.ok and result.lines == []


def test_demo_wdt_callbacks_then_the_reset(maixpy):
    now = [0]
    clock = (lambda: now[0], lambda ns: now.__setitem__(0, now[0] + max(0, ns)))
    result = maixpy.run(_script("demo_wdt.py"), clock=clock, timeout=120)
    assert result.exit_code == 0, result.stderr
    lines = result.lines
    assert any(line.startswith("[] [MAIXPY]WDT:") for line in lines)
    assert any(line.startswith("{} [MAIXPY]WDT:") for line in lines)
    assert "WDT(0) was not fed for 3000 ms" in result.stderr
    idle = [line for line in lines if line.startswith("idle")]
    assert 5 <= len(idle) <= 7  # the loop prints once a second until the 6 s reset (3 s + 3 s unanswered)
