"""Loading the MODEL argument of a subcommand, with one error line instead of a traceback."""

from __future__ import annotations

import sys
from pathlib import Path


def load_model_arg(path: Path, command: str, *, needs_input: bool = False):
    """The loaded model, or None after printing ``maixemu COMMAND: <why>`` to stderr (exit 2)."""
    from ..kmodel import KmodelError, load_kmodel

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
