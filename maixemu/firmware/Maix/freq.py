"""``Maix.freq``: CPU and KPU clocks in MHz; ``set`` stores new clocks and reboots the board.

The emulated board runs at its configured defaults, 400 MHz CPU and 400 MHz KPU (PLL1 400 MHz,
divider 1). ``set`` follows the firmware: out-of-range clocks are ``OSError``, an unchanged
configuration prints ``No change``, otherwise the configuration is stored, ``reboot now`` is printed
and the board reboots — which ends the run cleanly (:class:`~maixemu.firmware.registry.ScriptReset`).
"""

from __future__ import annotations

from ..registry import ScriptReset

FREQ_CPU_MIN, FREQ_CPU_MAX = 26_000_000, 600_000_000
FREQ_KPU_MIN, FREQ_KPU_MAX = 26_000_000, 600_000_000
_DEFAULT = {"cpu": 400_000_000, "pll1": 400_000_000, "kpu_div": 1}

_config = dict(_DEFAULT)
_cpu_hz = _DEFAULT["cpu"]
_kpu_hz = _DEFAULT["pll1"] // _DEFAULT["kpu_div"]


def _reset_state() -> None:
    global _cpu_hz, _kpu_hz
    _config.clear()
    _config.update(_DEFAULT)
    _cpu_hz = _DEFAULT["cpu"]
    _kpu_hz = _DEFAULT["pll1"] // _DEFAULT["kpu_div"]


def get() -> tuple[int, int]:
    """``(cpu_MHz, kpu_MHz)``."""
    return (_cpu_hz // 1_000_000, _kpu_hz // 1_000_000)


def get_cpu() -> int:
    return _cpu_hz // 1_000_000


def get_kpu() -> int:
    return _kpu_hz // 1_000_000


def set(cpu: int = 0, pll1: int = 0, kpu_div: int = 0) -> None:  # noqa: A001 - the firmware's name
    """Store new clocks (MHz; 0 keeps the current setting) and reboot, or print ``No change``."""
    config = dict(_config)
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
    if abs(config["cpu"] - _cpu_hz) < 20 and abs(kpu_hz - _kpu_hz) < 20:
        print("No change")
        return None
    _config.update(config)
    print("\nreboot now")
    raise ScriptReset("Maix.freq.set()")
