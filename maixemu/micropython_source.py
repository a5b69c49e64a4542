"""Make MicroPython source that CPython rejects compile, without changing what it means.

MicroPython accepts non-ASCII characters inside bytes literals (``b'你好'`` is the UTF-8 bytes);
CPython raises ``SyntaxError: bytes can only contain ASCII literal characters``. Such literals are
rewritten to the same bytes with ``\\x`` escapes; nothing else in the script is touched, so line
numbers in tracebacks stay those of the user's file.

Two more differences of MicroPython's compiler (the commit MaixPy builds, ced340d) are handled here:
indentation mixing tabs and spaces (:func:`expand_indent_tabs`) and ``NAME = const(value)`` without
importing ``const`` (:func:`fold_consts`); and one of its types: ``bytes`` objects have ``format``
(:func:`route_format_method`).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

_PREFIX = re.compile(r"^([A-Za-z]*)(['\"])")


def _escape_bytes_literal(token: str) -> str:
    match = _PREFIX.match(token)
    assert match is not None  # (a STRING token is its prefix letters, then a quote)
    prefix = match.group(1)
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


# ------------------------------------------------------------------ indentation with tabs
#: MicroPython's lexer (py/lexer.c) moves a tab to the next multiple of 8 columns.
MICROPYTHON_TAB_SIZE = 8


def expand_indent_tabs(source: str) -> str:
    """``source`` with the tabs of each line's indentation expanded as MicroPython's lexer counts
    them, so a file mixing tabs and spaces (which CPython rejects with ``TabError``) means what it
    means on the device. Only leading whitespace changes; line numbers stay the same."""
    out = []
    for line in source.splitlines(keepends=True):
        body = line.lstrip(" \t")
        indent = line[: len(line) - len(body)]
        out.append(indent.expandtabs(MICROPYTHON_TAB_SIZE) + body if "\t" in indent else line)
    return "".join(out)


# ------------------------------------------------------------------ X = const(value)
class _ConstFolder(ast.NodeTransformer):
    """MicroPython's parser folds ``NAME = const(value)`` (py/parse.c, MICROPY_COMP_CONST) whether or
    not the script imported ``const``: the assignment stores ``value``. Only that form is folded:
    ``const`` anywhere else is an ordinary name (a NameError unless imported from ``micropython``)."""

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        value = node.value
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "const" and len(value.args) == 1 and not value.keywords):
            arg = value.args[0]
            if isinstance(arg, ast.Constant) and (not isinstance(arg.value, int) or isinstance(arg.value, bool)):
                raise SyntaxError("constant must be an integer",
                                  (self.filename, node.lineno, node.col_offset + 1, None))
            node.value = arg
            return node
        return self.generic_visit(node)


def fold_consts(tree: ast.Module, filename: str) -> ast.Module:
    """``tree`` with every ``NAME = const(value)`` assignment storing ``value`` directly."""
    return ast.fix_missing_locations(_ConstFolder(filename).visit(tree))


# ------------------------------------------------------------------ bytes.format
#: The run builtin that ``X.format`` is routed through (``maixemu.firmware.mp_builtins.format_method``).
FORMAT_METHOD_HOOK = "__maixemu_format_method__"


class _FormatRouter(ast.NodeTransformer):
    """``X.format`` (read, called or not) becomes ``__maixemu_format_method__(X)``: MicroPython's
    ``bytes`` has ``format`` (objstr.c: str and bytes share ``mp_obj_str_format``), CPython's has not,
    and only at run time is ``X`` known to be bytes. Every other object keeps its own ``format``."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr != "format" or not isinstance(node.ctx, ast.Load):
            return node
        call = ast.Call(func=ast.Name(id=FORMAT_METHOD_HOOK, ctx=ast.Load()), args=[node.value], keywords=[])
        return ast.copy_location(call, node)


def route_format_method(tree: ast.Module) -> ast.Module:
    """``tree`` with every ``X.format`` read through the run's format-method hook."""
    return ast.fix_missing_locations(_FormatRouter().visit(tree))
