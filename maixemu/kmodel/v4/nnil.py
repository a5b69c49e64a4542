"""NNIL, the tiny stack language of V4 ``nnil_unary_method`` nodes, compiled once to numpy.

The runtime interprets the byte code once per element. The program has no branches, so its stack
effect is static: we run the interpreter a single time at load time over *symbolic* values
(closures) and get one vectorised function of the whole input array. Every operation keeps the
reference's float32 semantics (one rounding per operator; ``std::min``/``max``/``clamp`` by
comparison; libm functions through double, see ``ops.v4_float``). Malformed programs (unknown byte,
stack under/overflow, no ``ret``) are rejected at load time with the byte offset.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import KmodelFormatError
from ..ops import v4_float as vf

F32 = np.float32
STACK_DEPTH = 64

#: a compiled sub-expression: (input array, per-call memo of shared values) -> array
Expr = Callable[[np.ndarray, dict], np.ndarray]

#: byte -> (mnemonic, number of popped operands)
OPCODES: dict[int, tuple[str, int]] = {
    0x00: ("nop", 0), 0x01: ("dup", 0), 0x02: ("pop", 1), 0x03: ("lda_0", 0),
    0x04: ("ldc_r4_0", 0), 0x05: ("ldc_r4_1", 0), 0x06: ("ldc_r4", 0),
    0x20: ("abs", 1), 0x21: ("ceil", 1), 0x22: ("cos", 1), 0x23: ("exp", 1), 0x24: ("floor", 1),
    0x25: ("log", 1), 0x26: ("neg", 1), 0x27: ("rsqrt", 1), 0x28: ("sin", 1), 0x29: ("square", 1),
    0x40: ("add", 2), 0x41: ("sub", 2), 0x42: ("mul", 2), 0x43: ("div", 2), 0x44: ("min", 2),
    0x45: ("max", 2), 0x80: ("clamp", 3), 0xA0: ("ret", 1),
}

_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    name: vf.UNARY_FUNCS[name] for name in vf.UNARY_OPS
}
_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = vf.BINARY_FUNCS


@dataclass(frozen=True)
class NnilProgram:
    """A compiled NNIL program: ``fn(x f32 array) -> f32 array`` plus its disassembly."""

    fn: Expr
    listing: tuple[str, ...]
    code_bytes: int

    def __call__(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = self.fn(np.asarray(x, dtype=F32), {})
        return np.broadcast_to(np.asarray(out, dtype=F32), np.shape(x)).copy()


def _input(x: np.ndarray, memo: dict) -> np.ndarray:
    return x


def _const(v: float) -> Expr:
    c = F32(v)
    return lambda x, memo: c


def _unary(fn, a: Expr) -> Expr:
    return lambda x, memo: np.asarray(fn(np.asarray(a(x, memo), dtype=F32)), dtype=F32)


def _binary(fn, a: Expr, b: Expr) -> Expr:
    return lambda x, memo: np.asarray(fn(np.asarray(a(x, memo), dtype=F32), np.asarray(b(x, memo), dtype=F32)), dtype=F32)


def _clamp(v: Expr, lo: Expr, hi: Expr) -> Expr:
    def f(x, memo):
        vv, ll, hh = (np.asarray(e(x, memo), dtype=F32) for e in (v, lo, hi))
        return np.where(vv < ll, ll, np.where(hh < vv, hh, vv)).astype(F32)

    return f


def _shared(e: Expr) -> Expr:
    """A value duplicated with ``dup``: evaluated once per call (the memo lives for one call)."""

    def f(x, memo):
        key = id(f)
        if key not in memo:
            memo[key] = e(x, memo)
        return memo[key]

    return f


def compile_nnil(code: bytes, base_offset: int = 0) -> NnilProgram:
    """Compile NNIL byte code (as stored after the two memory ranges) into a numpy function.

    ``base_offset`` is the file offset of ``code[0]``, used in error messages.
    """
    stack: list[Expr] = []
    listing: list[str] = []
    pos = 0

    def fail(msg: str, at: int) -> KmodelFormatError:
        return KmodelFormatError(f"NNIL: {msg}", offset=base_offset + at, field="nnil_unary_method.body")

    while pos < len(code):
        at = pos
        byte = code[pos]
        pos += 1
        if byte not in OPCODES:
            raise fail(f"invalid opcode 0x{byte:02x}", at)
        name, pops = OPCODES[byte]
        if len(stack) < pops:
            raise fail(f"stack underflow at '{name}'", at)
        if name == "ldc_r4":
            if pos + 4 > len(code):
                raise fail("ldc_r4 operand runs past the end of the body", at)
            (value,) = struct.unpack_from("<f", code, pos)
            pos += 4
            listing.append(f"{at:4d}: ldc_r4 {value!r}")
        elif name != "nop":
            listing.append(f"{at:4d}: {name}")
        if name == "nop":
            continue
        if name == "dup":
            if not stack:
                raise fail("dup on an empty stack", at)
            stack[-1] = _shared(stack[-1])
            stack.append(stack[-1])
        elif name == "pop":
            stack.pop()
        elif name == "lda_0":
            stack.append(_input)
        elif name == "ldc_r4_0":
            stack.append(_const(0.0))
        elif name == "ldc_r4_1":
            stack.append(_const(1.0))
        elif name == "ldc_r4":
            stack.append(_const(value))
        elif name in _UNARY:
            stack.append(_unary(_UNARY[name], stack.pop()))
        elif name in _BINARY:
            b = stack.pop()
            a = stack.pop()
            stack.append(_binary(_BINARY[name], a, b))
        elif name == "clamp":
            hi = stack.pop()
            lo = stack.pop()
            v = stack.pop()
            stack.append(_clamp(v, lo, hi))
        elif name == "ret":
            return NnilProgram(stack.pop(), tuple(listing), pos)
        if len(stack) > STACK_DEPTH:
            raise fail(f"stack overflow (more than {STACK_DEPTH} values)", at)
    raise fail("program ends without 'ret' (output element would be left unwritten)", len(code))
