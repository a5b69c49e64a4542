"""The modules a MaixPy script imports (KPU, image, sensor, lcd, utime, Maix, ...), with device semantics.

The runner installs them under their MaixPy names; tests may import them directly
(``from maixemu.firmware import image``).
"""
