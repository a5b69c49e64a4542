"""Names the firmware's boot scripts leave in the globals a script runs in (no import needed).

Every board's: ``_boot.py``, the stock ``main.py``/``boot.py`` and ``ide_debug.py`` of the MaixPy
releases and of CanMV (``maixemu.firmware.boot_names`` lists them per board and source; ``axp192``,
``I2S``, ``audio``, ``sensor`` and ``kpu`` are the M5StickV's, ``I2C`` the Amigo's).

For pyright / Pylance / basedpyright: copy this file to your project root as ``__builtins__.pyi``
(pyright adds its names to the builtins there). mypy has no such mechanism: import the names.
"""

import audio as audio
import gc as gc
import image as image
import json as json
import KPU as kpu
import lcd as lcd
import machine as machine
import Maix as Maix
import os as os
import sensor as sensor
import usys as sys  # the boot global is MaixPy's sys (print_exception)
import time as time
import uos as uos
from board import board_info as board_info
from fpioa_manager import fm as fm
from machine import I2C as I2C, UART as UART
from Maix import FPIOA as FPIOA, GPIO as GPIO, I2S as I2S
from pmu import axp192 as axp192
