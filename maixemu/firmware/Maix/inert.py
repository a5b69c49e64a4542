"""``Maix.I2S``, ``Maix.FFT``, ``Maix.Audio``, ``Maix.MIC_ARRAY``: importable, constructible, silent.

Audio hardware is not emulated. Scripts often import these next to ``GPIO`` without using them,
so importing costs nothing; the first use (constructing one, calling one of its functions) prints a
one-time notice. Every method returns None and every UPPER_CASE constant reads as 0.
"""

from __future__ import annotations

from typing import Any

from .. import notices


class _InertMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name.isupper():
            return 0
        return _inert_function(cls.__name__, name)


def _inert_function(owner: str, name: str):
    def call(*args: Any, **kwargs: Any) -> None:
        notices.not_emulated(f"Maix.{owner}")
        return None

    call.__name__ = name
    call.__qualname__ = f"{owner}.{name}"
    return call


class _Inert(metaclass=_InertMeta):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        notices.not_emulated(f"Maix.{type(self).__name__}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name.isupper():
            return 0
        return _inert_function(type(self).__name__, name)


class I2S(_Inert):
    """I2S audio bus (not emulated)."""


class FFT(_Inert):
    """Hardware FFT (not emulated)."""


class Audio(_Inert):
    """Audio buffers (not emulated)."""


class MIC_ARRAY(_Inert):
    """Microphone array (not emulated)."""
