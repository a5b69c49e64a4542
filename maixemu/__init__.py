"""maixemu: run MaixPy (K210) scripts unchanged on a PC."""

__version__ = "0.1.0"
