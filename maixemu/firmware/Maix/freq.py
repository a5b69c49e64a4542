"""``Maix.freq``: CPU and KPU clocks in MHz; ``set`` stores new clocks and reboots the board.

The clocks are the board's (``_current().system``). The emulated board runs at its configured defaults, 400 MHz CPU and 400 MHz KPU (PLL1 400 MHz,
divider 1). ``set`` follows the firmware: out-of-range clocks are ``OSError``, an unchanged
configuration prints ``No change``, otherwise the configuration is stored, ``reboot now`` is printed
and the board reboots — which ends the run cleanly (:class:`~maixemu.firmware.mp.registry.ScriptReset`).
"""

from __future__ import annotations

from ..mp.registry import ScriptReset
from ..state import current as _current

FREQ_CPU_MIN, FREQ_CPU_MAX = 26_000_000, 600_000_000
FREQ_KPU_MIN, FREQ_KPU_MAX = 26_000_000, 600_000_000


def get() -> tuple[int, int]:
    """``(cpu_MHz, kpu_MHz)``."""
    system = _current().system
    return (system.cpu_hz // 1_000_000, system.kpu_hz // 1_000_000)


def get_cpu() -> int:
    return _current().system.cpu_hz // 1_000_000


def get_kpu() -> int:
    return _current().system.kpu_hz // 1_000_000


def set(cpu: int = 0, pll1: int = 0, kpu_div: int = 0) -> None:  # noqa: A001 - the firmware's name
    """Store new clocks (MHz; 0 keeps the current setting) and reboot, or print ``No change``."""
    system = _current().system
    config = dict(system.freq_config)
    if int(cpu) != 0:
        config["cpu"] = int(cpu) * 1_000_000
    if int(pll1) != 0:
        config["pll1"] = int(pll1) * 1_000_000
    if int(kpu_div) != 0:
        config["kpu_div"] = int(kpu_div)
    kpu_hz = config["pll1"] // config["kpu_div"]
    if not FREQ_KPU_MIN <= kpu_hz <= FREQ_KPU_MAX:
        raise OSError("Unsupported KPU frequency!")
    if not FREQ_CPU_MIN <= config["cpu"] <= FREQ_CPU_MAX:
        raise OSError("Unsupported CPU frequency!")
    if abs(config["cpu"] - system.cpu_hz) < 20 and abs(kpu_hz - system.kpu_hz) < 20:
        print("No change")
        return None
    system.freq_config.update(config)
    print("\nreboot now")
    raise ScriptReset("Maix.freq.set()")
