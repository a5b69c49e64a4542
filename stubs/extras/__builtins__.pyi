"""Names MaixPy's frozen ``_boot.py`` leaves in the globals ``main.py`` runs in (no import needed).

For pyright / Pylance / basedpyright: copy this file to your project root as ``__builtins__.pyi``
(pyright adds its names to the builtins there). mypy has no such mechanism: import the names.
"""

import gc as gc
import machine as machine
import os as os
import usys as sys  # the boot global is MaixPy's sys (print_exception)
import time as time
from board import board_info as board_info
from fpioa_manager import fm as fm
from Maix import FPIOA as FPIOA, GPIO as GPIO
