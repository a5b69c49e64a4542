"""CanMV's ``maix`` and MaixPy v4's ``maix`` share a name: a MaixCAM script gets the firmware's
ImportError and one line saying what it is."""

from __future__ import annotations

import pytest

import maixemu

from maixemu.firmware import maix


def test_a_maixpy_v4_module_name_gets_micropythons_message_and_advice():
    with pytest.raises(ImportError) as info:
        getattr(maix, "camera")
    assert str(info.value) == "cannot import name camera"  # MicroPython ced340d runtime.c, byte for byte
    advice = maixemu.advice(info.value)  # maixemu's line, beside the exception
    assert "MaixPy v4" in advice and "'sensor'" in advice


def test_other_missing_names_stay_attribute_errors_and_the_real_ones_are_there():
    assert not hasattr(maix, "no_such_name")
    assert {"FPIOA", "GPIO", "I2S", "FFT", "utils", "freq", "config", "KPU"} <= set(dir(maix))
