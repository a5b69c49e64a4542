"""A failing script's traceback as MicroPython prints it (``mp_obj_print_exception``, MaixPy's
MicroPython at ced340d): device paths, no source lines, no chained exceptions, MicroPython's
exception names and words; SyntaxErrors as its parser and compiler raise them."""

from __future__ import annotations

import pytest

from _shared import split_summary


def _traceback(result) -> list[str]:
    return split_summary(result.stderr)[0].splitlines()


def test_frames_name_the_device_path_even_for_a_script_outside_the_mounts(maixpy):
    result = maixpy.run(code="def f(x):\n    return 1 // x\nf(0)\n")  # the plugin's code= lives in a temp folder
    assert result.exit_code == 1
    assert _traceback(result) == ["Traceback (most recent call last):",
                                  '  File "/sd/main.py", line 3, in <module>',
                                  '  File "/sd/main.py", line 2, in f',
                                  "ZeroDivisionError: divide by zero"]
    assert "/tmp" not in result.stderr and "pytest" not in result.stderr


def test_no_exception_chaining(maixpy):
    code = "try:\n    raise TypeError('a')\nexcept TypeError:\n    raise ValueError('b')\n"
    result = maixpy.run(code=code)
    assert _traceback(result) == ["Traceback (most recent call last):", '  File "/sd/main.py", line 4, in <module>',
                                  "ValueError: b"]


@pytest.mark.parametrize("code, last", [
    ("print(undefined_name)\n", "NameError: name 'undefined_name' isn't defined"),
    ("x = 1 + 'a'\n", "TypeError: unsupported types for __add__: 'int', 'str'"),
    ("x = 1\nx -= 'a'\n", "TypeError: unsupported types for __isub__: 'int', 'str'"),
    ("x = 1 < 'a'\n", "TypeError: unsupported types for __lt__: 'int', 'str'"),
    ("x = 'a' + 1\n", "TypeError: can't convert 'int' object to str implicitly"),
    ("x = 1.5 / 0\n", "ZeroDivisionError: divide by zero"),
    ("x = 5 % 0\n", "ZeroDivisionError: divide by zero"),
    ("x = None()\n", "TypeError: 'NoneType' object isn't callable"),
    ("x = 5[0]\n", "TypeError: 'int' object isn't subscriptable"),
    ("for i in 5:\n    pass\n", "TypeError: 'int' object isn't iterable"),
    ("(1, 2)[0] = 3\n", "TypeError: 'tuple' object doesn't support item assignment"),
    ("def f(a):\n    pass\nf(1, 2)\n", "TypeError: function takes 1 positional arguments but 2 were given"),
    ("def f(a, b):\n    pass\nf()\n", "TypeError: function missing 2 required positional arguments"),
    ("def f():\n    pass\nf(k=1)\n", "TypeError: unexpected keyword argument 'k'"),
    ("int('12x')\n", "ValueError: invalid syntax for integer with base 10: '12x'"),
    ("float('x')\n", "ValueError: invalid syntax for number"),
    ("def f():\n    y = x\n    x = 1\nf()\n", "NameError: local variable referenced before assignment"),
    ("open('/sd/none.txt')\n", "OSError: [Errno 2] ENOENT"),
    ("[].pop()\n", "IndexError: pop from empty list"),
    ("{}['k']\n", "KeyError: k"),
    ("raise Exception\n", "Exception: "),
])
def test_micropython_words_and_names(maixpy, code, last):
    result = maixpy.run(code=code)
    assert result.exit_code == 1
    assert _traceback(result)[-1] == last


@pytest.mark.parametrize("code, line, last", [
    ("import lcd\nfor i in range(3)\n    print(i)\n", 2, "SyntaxError: invalid syntax"),
    ("x = 1\n  y = 2\n", 2, "IndentationError: unexpected indent"),
    ("if 1:\n        a = 1\n    b = 2\n", 3, "IndentationError: unindent doesn't match any outer indent level"),
    ("return 5\n", 1, "SyntaxError: 'return' outside function"),
    ("def f(a=1, b):\n    pass\n", 1, "SyntaxError: non-default argument follows default argument"),
    ("1 = x\n", 1, "SyntaxError: can't assign to expression"),
])
def test_syntax_errors(maixpy, code, line, last):
    result = maixpy.run(code=code)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == ["Traceback (most recent call last):", f'  File "/sd/main.py", line {line}',
                                          last]


def test_a_syntax_error_in_an_imported_module(maixpy):
    result = maixpy.run(code="import helper\n", files={"/sd/helper.py": "x = 1\ndef f(:\n    pass\n"})
    assert _traceback(result) == ["Traceback (most recent call last):", '  File "/sd/main.py", line 1, in <module>',
                                  '  File "/sd/helper.py", line 2', "SyntaxError: invalid syntax"]


def test_debug_keeps_cpythons_format(maixpy):
    result = maixpy.run(code="print(nope)\n", debug=True)
    assert "NameError: name 'nope' is not defined" in result.stderr


def test_print_exception_uses_the_same_words(maixpy):
    code = "import sys\ntry:\n    None()\nexcept Exception as e:\n    sys.print_exception(e)\n"
    result = maixpy.run(code=code)
    assert result.ok
    assert result.lines == ["Traceback (most recent call last):", '  File "/sd/main.py", line 3, in <module>',
                            "TypeError: 'NoneType' object isn't callable"]
