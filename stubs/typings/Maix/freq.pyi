"""``Maix.freq``: CPU and KPU clocks."""

def get() -> tuple[int, int]:
    """``(cpu_MHz, kpu_MHz)``, e.g. ``(400, 400)``."""
def get_cpu() -> int:
    """CPU clock in MHz."""
def get_kpu() -> int:
    """KPU clock in MHz."""
def set(cpu: int = 0, pll1: int = 0, kpu_div: int = 0) -> None:
    """Store new clocks and **reboot** (prints ``No change`` if nothing changed)."""
