"""MicroPython's traceback format (``mp_obj_print_exception``), for ``sys.print_exception`` and the
messages the firmware prints itself (an exception in a ``_thread``, in an IRQ handler)::

    Traceback (most recent call last):
      File "/sd/main.py", line 12, in <module>
    ValueError: bad value

Only the script's own frames are listed (MicroPython shows no frames for built-in code; here
maixemu's modules, the standard library and site-packages play that part). File names inside the
mapped folders are shown as device paths. The last line is ``Type: message`` — always with the
colon, even for an empty message — with OSErrors as ``[Errno 2] ENOENT`` and CPython-only
exception classes named as MicroPython names them (``FileNotFoundError`` → ``OSError``).
"""

from __future__ import annotations

import errno as _errno
import functools as _functools
import os as _os
import re as _re
import sysconfig as _sysconfig
import traceback as _traceback

from collections.abc import Callable
from typing import Any

from .script_paths import PACKAGE_DIR as _PACKAGE_DIR
from .script_paths import is_shipped_script as _is_shipped_script

_RENAMED = {
    "ModuleNotFoundError": "ImportError",
    "RecursionError": "RuntimeError",
}


@_functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    paths = _sysconfig.get_paths()
    dirs = {_PACKAGE_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            dirs.add(_os.path.realpath(paths[key]))
    return tuple(d.rstrip(_os.sep) + _os.sep for d in dirs)


def _is_script_frame(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return False
    real = _os.path.realpath(filename) if _os.path.isabs(filename) else filename
    if _os.path.isabs(filename) and _is_shipped_script(real):
        return True  # scripts shipped inside the package (samples, the default sample)
    return not any(real.startswith(d) for d in _library_dirs())


def _device_name(filename: str) -> str:
    """The device's name of a script file: the run's own rule when a session set one (a script outside
    the mounts is ``/sd/main.py`` too), else its path in the board's mounts."""
    try:
        from .state import current

        board = current()
        if board.run.device_name is not None:
            return board.run.device_name(filename)
        mapped = board.storage.to_device(filename) if _os.path.isabs(filename) else None
    except Exception:  # naming a frame must never fail
        mapped = None
    return mapped or filename


def _type_name(exc: BaseException) -> str:
    cls = type(exc)
    if cls.__module__ == "builtins":
        if issubclass(cls, OSError):
            return "OSError"
        if cls is UnboundLocalError:  # vm.c raises a NameError for it
            return "NameError"
        if issubclass(cls, SyntaxError) and isinstance(exc, SyntaxError):  # IndentationError: the lexer's two only
            return "IndentationError" if _syntax_message(exc) in _INDENTATION_ERRORS else "SyntaxError"
        return _RENAMED.get(cls.__name__, cls.__name__)
    return cls.__name__


#: CPython operator symbols -> the method name MicroPython's "unsupported types for %q" names
#: (``mp_binary_op_method_name``); in-place forms are ``__iadd__`` and so on.
_OPERATOR_METHODS = {
    "+": "add", "-": "sub", "*": "mul", "@": "matmul", "/": "truediv", "//": "floordiv", "%": "mod",
    "**": "pow", "<<": "lshift", ">>": "rshift", "&": "and", "|": "or", "^": "xor", "divmod()": "divmod",
    "** or pow()": "pow", "<": "lt", ">": "gt", "<=": "le", ">=": "ge",
}


def _operator_method(symbol: str) -> str:
    inplace = symbol.endswith("=") and symbol[:-1] in _OPERATOR_METHODS and symbol not in _OPERATOR_METHODS
    name = _OPERATOR_METHODS.get(symbol[:-1] if inplace else symbol, symbol)
    return f"__i{name}__" if inplace else f"__{name}__"


#: CPython's wording of errors MicroPython's VM raises itself -> MicroPython's (py/runtime.c, obj.c,
#: objstr.c, argcheck.c, parsenum.c at the firmware's commit, MICROPY_ERROR_REPORTING_DETAILED).
_MESSAGES: tuple[tuple[type[BaseException], _re.Pattern[str], Any], ...] = tuple(
    (kind, _re.compile(pattern), replacement) for kind, pattern, replacement in (
        (NameError, r"^name '(.+)' is not defined$", r"name '\1' isn't defined"),
        (NameError, r"^cannot access (?:local|free) variable '.+' where it is not associated with a value$|"
                    r"^local variable '.+' referenced before assignment$",
         "local variable referenced before assignment"),
        (ZeroDivisionError, r"^complex ", "complex divide by zero"),
        (ZeroDivisionError, r"", "divide by zero"),  # every int and float flavour
        (TypeError, r"^unsupported operand type\(s\) for (.+): '(.+)' and '(.+)'$",
         lambda m: f"unsupported types for {_operator_method(m.group(1))}: '{m.group(2)}', '{m.group(3)}'"),
        (TypeError, r"^'(.+)' not supported between instances of '(.+)' and '(.+)'$",
         lambda m: f"unsupported types for {_operator_method(m.group(1))}: '{m.group(2)}', '{m.group(3)}'"),
        (TypeError, r'^can only concatenate str \(not "(.+)"\) to str$', r"can't convert '\1' object to str implicitly"),
        (TypeError, r"^can't concat (.+) to bytes$", r"can't convert '\1' object to bytes implicitly"),
        (TypeError, r"^'(.+)' object is not callable$", r"'\1' object isn't callable"),
        (TypeError, r"^'(.+)' object is not subscriptable$", r"'\1' object isn't subscriptable"),
        (TypeError, r"^'(.+)' object is not iterable$", r"'\1' object isn't iterable"),
        (TypeError, r"^'(.+)' object does not support item assignment$", r"'\1' object doesn't support item assignment"),
        (TypeError, r"^'(.+)' object doesn't support item deletion$|^'(.+)' object does not support item deletion$",
         lambda m: f"'{m.group(1) or m.group(2)}' object doesn't support item deletion"),
        (TypeError, r"^.+\(\) takes (\d+) positional arguments? but (\d+) (?:were|was) given$",
         r"function takes \1 positional arguments but \2 were given"),
        (TypeError, r"^.+\(\) missing (\d+) required positional arguments?: .+$",
         r"function missing \1 required positional arguments"),
        (TypeError, r"^.+\(\) got an unexpected keyword argument '(.+)'$", r"unexpected keyword argument '\1'"),
        (ValueError, r"^invalid literal for int\(\) with base (\d+): (.+)$", r"invalid syntax for integer with base \1: \2"),
        (ValueError, r"^could not convert string to float: .+$", "invalid syntax for number"),
        (IndexError, r"^list assignment index out of range$", "list index out of range"),
        (RecursionError, r"^maximum recursion depth exceeded.*$", "maximum recursion depth exceeded"),
        (AttributeError, r"^module '.+' has no attribute '(.+)'$", r"'module' object has no attribute '\1'"),
    ))


def micropython_message(exc: BaseException, text: str) -> str:
    """``text`` (the exception's message) as MicroPython words it, for the errors the VM raises."""
    if type(exc).__module__ != "builtins":
        return text
    for kind, pattern, replacement in _MESSAGES:
        if isinstance(exc, kind):
            found = pattern.match(text)
            if found is not None:
                return replacement(found) if callable(replacement) else found.expand(replacement)
    return text


def _message(exc: BaseException) -> str:
    args = exc.args
    if isinstance(exc, SyntaxError):
        return _syntax_message(exc)
    if not args:
        return ""
    if isinstance(exc, OSError) and len(args) <= 2 and isinstance(args[0], int) and args[0] in _errno.errorcode:
        return f"[Errno {args[0]}] {_errno.errorcode[args[0]]}"
    if len(args) == 1:
        return micropython_message(exc, str(args[0]))
    return repr(tuple(args))


#: The messages of MicroPython's two IndentationErrors (py/parse.c); every other parse error is a SyntaxError.
_INDENTATION_ERRORS = ("unexpected indent", "unindent doesn't match any outer indent level")

#: Compile errors MicroPython words as CPython does (or almost): py/compile.c's texts.
_COMPILE_ERRORS = {
    "'return' outside function": "'return' outside function",
    "'yield' outside function": "'yield' outside function",
    "'await' outside function": "'await' outside function",
    "non-default argument follows default argument": "non-default argument follows default argument",
    "parameter without a default follows parameter with a default": "non-default argument follows default argument",
    "positional argument follows keyword argument": "non-keyword arg after keyword arg",
    "default 'except:' must be last": "default 'except' must be last",
    "constant must be an integer": "constant must be an integer",
}


def _syntax_message(exc: SyntaxError) -> str:
    """MicroPython's parser says ``invalid syntax`` for every parse error, ``unexpected indent`` and
    ``unindent doesn't match any outer indent level`` for the two indentation errors of its lexer,
    and its compiler's own texts for the errors found after parsing."""
    text = str(exc.msg or "")
    if isinstance(exc, IndentationError) and not isinstance(exc, TabError):
        if text.startswith("unexpected indent"):
            return "unexpected indent"
        if text.startswith("unindent does not match"):
            return "unindent doesn't match any outer indent level"
    if text in _COMPILE_ERRORS:
        return _COMPILE_ERRORS[text]
    if text.startswith("cannot assign to") or text.startswith("cannot delete"):
        return "can't assign to expression" if text.startswith("cannot assign") else "can't delete expression"
    return "invalid syntax"


def format_exception(exc: BaseException, *, is_script: Callable[[str], bool] | None = None,
                     device_name: Callable[[str], str] | None = None) -> str:
    """The text MicroPython's ``mp_obj_print_exception`` writes (``sys.print_exception``, an uncaught
    exception): the script's frames, outermost first, each ``File "/sd/main.py", line 5, in f``
    without the source line; then ``Type: message`` in MicroPython's names and words. A
    ``SyntaxError`` is one frame without a block name (``File "/sd/main.py", line 2``). Only this
    exception: MicroPython does not chain exceptions (no "During handling of the above ...").

    ``is_script(filename)`` picks the frames to show (default: the script's own, not maixemu's or
    the library's); ``device_name(filename)`` names them (default: the device path of a file in
    the board's mounts).
    """
    is_script = is_script or _is_script_frame
    device_name = device_name or _device_name
    lines = []
    frames = [f for f in _traceback.extract_tb(exc.__traceback__) if is_script(f.filename)]
    if frames or isinstance(exc, SyntaxError) and exc.filename:
        lines.append("Traceback (most recent call last):\n")
        for frame in frames:
            lines.append(f'  File "{device_name(frame.filename)}", line {frame.lineno}, in {frame.name}\n')
        if isinstance(exc, SyntaxError) and exc.filename:
            lines.append(f'  File "{device_name(exc.filename)}", line {exc.lineno or 1}\n')
    lines.append(f"{_type_name(exc)}: {_message(exc)}\n")
    return "".join(lines)


__all__ = ["format_exception", "micropython_message"]
