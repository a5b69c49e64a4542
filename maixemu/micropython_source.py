"""Make MicroPython source that CPython rejects compile, without changing what it means.

MicroPython accepts non-ASCII characters inside bytes literals (``b'你好'`` is the UTF-8 bytes);
CPython raises ``SyntaxError: bytes can only contain ASCII literal characters``. Such literals are
rewritten to the same bytes with ``\\x`` escapes; nothing else in the script is touched, so line
numbers in tracebacks stay those of the user's file.
"""

from __future__ import annotations

import io
import re
import tokenize

_PREFIX = re.compile(r"^([A-Za-z]*)(['\"])")


def _escape_bytes_literal(token: str) -> str:
    prefix = _PREFIX.match(token).group(1)
    if "b" not in prefix.lower() or "r" in prefix.lower() or token.isascii():
        return token  # raw bytes with non-ASCII text: too rare to rewrite safely
    body_start = len(prefix)
    body = token[body_start:]
    escaped = "".join(ch if ch.isascii() else "".join(f"\\x{b:02x}" for b in ch.encode("utf-8")) for ch in body)
    return prefix + escaped


def fix_bytes_literals(source: str) -> str:
    """``source`` with every non-ASCII bytes literal rewritten as escapes (same value)."""
    lines = source.splitlines(keepends=True)
    edits: list[tuple[tuple[int, int], tuple[int, int], str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.STRING and not tok.string.isascii():
                new = _escape_bytes_literal(tok.string)
                if new != tok.string:
                    edits.append((tok.start, tok.end, new))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    for (srow, scol), (erow, ecol), new in reversed(edits):
        head = lines[srow - 1][:scol]
        tail = lines[erow - 1][ecol:]
        # keep the line count: a multi-line literal becomes one line plus empty lines
        lines[srow - 1 : erow] = [head + new + tail] + ["\n"] * (erow - srow)
    return "".join(lines)
