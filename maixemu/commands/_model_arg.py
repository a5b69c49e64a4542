"""Loading the MODEL argument of a subcommand, with one error line instead of a traceback."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path


def _is_flash_package(path: Path) -> bool:
    if path.suffix.lower() == ".kfpkg":
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _refusal(path: Path) -> str | None:
    """Why ``path`` cannot be read as a model file without even opening it (a FIFO would block)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"no such file: {path}"
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return f"{path} is a folder, not a model file"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is {'a FIFO' if stat.S_ISFIFO(info.st_mode) else 'not a regular file'}, not a model file"
    return None


def load_model_arg(path: Path, command: str, *, needs_input: bool = False):
    """The loaded model, or None after printing ``maixemu COMMAND: <why>`` to stderr (exit 2).

    A .kfpkg is checked as ``maixemu run --flash-image`` checks it first, so both commands give the
    same verdict on a broken package.
    """
    from ..host.flash_image import FlashImageError, check_flash_image
    from ..kmodel import KmodelError, load_kmodel

    refusal = _refusal(path)
    if refusal is not None:
        print(f"maixemu {command}: {refusal}", file=sys.stderr)
        return None
    if _is_flash_package(path):
        try:
            check_flash_image(path)
        except FlashImageError as exc:
            print(f"maixemu {command}: {exc}", file=sys.stderr)
            return None
    try:
        model = load_kmodel(path)
    except FileNotFoundError:
        print(f"maixemu {command}: no such file: {path}", file=sys.stderr)
        return None
    except (OSError, KmodelError) as exc:
        print(f"maixemu {command}: {path}: {exc}", file=sys.stderr)
        return None
    if needs_input and not model.inputs:
        print(f"maixemu {command}: this model has no input the device runner accepts", file=sys.stderr)
        return None
    return model
