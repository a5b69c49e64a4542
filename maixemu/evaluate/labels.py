"""Class names: a ``--labels`` file (one per line, as MaixPy scripts load them) and its checks.

The model's output index is the truth: label ``i`` names output value ``i``. Anything that would
silently map a dataset class to the wrong output (a labels file of the wrong length, class folders
whose order is only a guess) is refused with what to do instead.
"""

from __future__ import annotations

import stat
from pathlib import Path

from .errors import EvalError


#: A labels file larger than this is not one (a million class names of 16 characters).
MAX_LABELS_BYTES = 16 * 1024 * 1024


def read_labels(path: Path) -> list[str]:
    """Non-empty lines of a labels file, stripped (a trailing newline or CRLF is not a label). Only
    a regular file of at most :data:`MAX_LABELS_BYTES` is read (``/dev/zero`` or a FIFO never ends)."""
    try:
        info = Path(path).stat()
        if not stat.S_ISREG(info.st_mode):
            raise EvalError(f"--labels {path}: not a regular file (one class name per line)")
        if info.st_size > MAX_LABELS_BYTES:
            raise EvalError(f"--labels {path}: {info.st_size} bytes is too large for a labels file")
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise EvalError(f"--labels {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise EvalError(f"--labels {path}: not UTF-8 text (one class name per line)") from None
    names = [line.strip() for line in text.splitlines()]
    while names and not names[-1]:
        names.pop()
    if not names:
        raise EvalError(f"--labels {path}: the file has no class names (one per line, in the model's output order)")
    if "" in names:
        raise EvalError(f"--labels {path}: line {names.index('') + 1} is empty; every output needs a name")
    return names


def check_label_count(labels: list[str], expected: int, what: str, source: str) -> None:
    """Refuse a labels list whose length differs from the model's class count."""
    if len(labels) != expected:
        raise EvalError(
            f"{source} has {len(labels)} class names but {what} has {expected}: "
            f"give --labels FILE with exactly {expected} names, one per line, in the model's output order"
        )


def map_names(names: list[str], labels: list[str] | None, classes: int, source: str) -> dict[str, int]:
    """Dataset class names -> output index.

    With labels: each name must be one of them. Without: names that are all integers are taken as
    indexes ("0".."9" folders); any other names would need a guessed order, so they are refused.
    """
    if labels is not None:
        index = {name: i for i, name in enumerate(labels)}
        unknown = sorted(n for n in names if n not in index)
        if unknown:
            shown = ", ".join(repr(n) for n in unknown[:8]) + (" ..." if len(unknown) > 8 else "")
            raise EvalError(
                f"{source}: {len(unknown)} class name(s) are not in the labels file: {shown}; "
                "rename them to the labels' spelling or fix --labels"
            )
        return {n: index[n] for n in names}
    if all(_is_index(n) for n in names):
        mapping = {n: int(n) for n in names}
        too_big = sorted(n for n, i in mapping.items() if i >= classes)
        if too_big:
            raise EvalError(
                f"{source}: class {too_big[0]} is not an output of the model (it has {classes} classes, 0..{classes - 1})"
            )
        return mapping
    raise EvalError(
        f"{source}: class names {', '.join(repr(n) for n in sorted(names)[:5])}{' ...' if len(names) > 5 else ''} "
        f"cannot be matched to the model's {classes} outputs without a labels file: "
        "pass --labels FILE (one name per line, in output order, as the MaixPy script uses)"
    )


def _is_index(name: str) -> bool:
    return name.isdigit() and (name == "0" or not name.startswith("0"))
