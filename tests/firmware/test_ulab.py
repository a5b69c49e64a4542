"""ulab 0.26 (the firmware's micropython-ulab, ndarray.c/linalg.c/numerical.c/vectorise.c/poly.c/fft.c)."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import ulab


def test_module_names_and_dtypes():
    assert ulab.__version__ == 0.262
    assert (ulab.uint8, ulab.int8, ulab.uint16, ulab.int16, ulab.float) == (66, 98, 72, 104, 102)
    with pytest.raises(ImportError, match="cannot import name numpy.*import ulab as np"):
        ulab.numpy  # noqa: B018 - `from ulab import numpy` fails on these firmwares


def test_arrays_are_m_by_n_with_a_shape_method():
    a = ulab.array([1, 2, 3], dtype=ulab.uint8)
    assert a.shape() == (1, 3) and len(a) == 3 and a.rawsize() == (1, 3, 3, 3, 1)
    m = ulab.array([[1, 2], [3, 4]])
    assert m.shape() == (2, 2) and len(m) == 2
    assert repr(a) == "array([1, 2, 3], dtype=uint8)"
    assert repr(m) == "array([[1.0, 2.0],\n\t [3.0, 4.0]], dtype=float)"
    assert repr(ulab.array(range(12))) == "array([0.0, 1.0, 2.0, ..., 9.0, 10.0, 11.0], dtype=float)"
    assert repr(ulab.array([0.1])) == "array([0.1], dtype=float)"  # float32 printed with 7 digits
    with pytest.raises(ValueError, match="iterables are not of the same length"):
        ulab.array([[1, 2], [3]])
    with pytest.raises(ValueError, match="first argument must be an iterable"):
        ulab.array(5)
    with pytest.raises(TypeError, match="can't convert float to int"):
        ulab.array([1.5], dtype=ulab.uint8)
    assert list(ulab.array([300, -1], dtype=ulab.uint8)) == [44, 255]  # wrap on store


def test_scalar_typing_and_the_promotion_table():
    a = ulab.array([1, 2, 200], dtype=ulab.uint8)
    assert repr(a + 100) == "array([101, 102, 44], dtype=uint8)"  # uint8 + uint8 wraps
    assert repr(a + 0) == "array([1.0, 2.0, 200.0], dtype=float)"  # 0 is a float scalar
    assert repr(a + 300) == "array([301, 302, 500], dtype=uint16)"
    assert repr(a - 5) == "array([252, 253, 195], dtype=uint8)"
    assert repr(a + (-1)) == "array([0, 1, 199], dtype=int16)"  # uint8 + int8 -> int16
    assert repr(a / 2) == "array([0.5, 1.0, 100.0], dtype=float)"
    i16 = ulab.array([-2, 3], dtype=ulab.int16)
    assert repr(i16 + 1.0) == "array([65535.0, 4.0], dtype=float)"  # int16 read as uint16 (sic)
    u16 = ulab.array([300, 2], dtype=ulab.uint16)
    assert repr(u16 + 1.0) == "array([45.0, 2.0], dtype=float)"  # uint16 read as uint8 (sic)
    with pytest.raises(TypeError, match="unsupported types for __mul__: 'int', 'ndarray'"):
        2 * a
    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        a + ulab.array([1, 2])
    with pytest.raises(TypeError, match="wrong operand type on the right hand side"):
        a + [1, 2, 3]


def test_comparisons_return_lists_and_equality_a_bool():
    a = ulab.array([1, 5, 3])
    assert (a > 2) == [False, True, True]
    assert (ulab.array([[1, 2], [3, 4]]) >= 2) == [[False, True], [True, True]]
    assert (a == ulab.array([1, 5, 3])) is True and (a == ulab.array([1, 5, 3], dtype=ulab.uint8)) is False
    assert (a != 1) is True


def test_indexing_rules():
    x = ulab.array(range(6), dtype=ulab.uint8)
    assert x[2] == 2 and x[-1] == 5
    assert list(x[0:5:2]) == [0, 2]  # (stop - start) // step elements
    assert list(x[::-1]) == [5, 4, 3, 2, 1]  # a negative step drops the last one
    assert list(x[[True, False, True, False, False, True]]) == [0, 2, 5]
    with pytest.raises(IndexError, match="index is out of bounds"):
        x[6]
    m = ulab.array([[1, 2, 3], [4, 5, 6]], dtype=ulab.int8)
    assert repr(m[1]) == "array([4, 5, 6], dtype=int8)" and m[1].shape() == (1, 3)
    assert repr(m[1, 2]) == "array([6], dtype=int8)"
    assert repr(m[:, 1]) == "array([2, 5], dtype=int8)" and m[:, 1].shape() == (2, 1)
    with pytest.raises(IndexError, match="too many indices"):
        m[0, 0, 0]
    m[0, 0] = 2.6  # a float into an int array rounds
    m[1] = 9
    assert list(m.flatten()) == [3, 2, 3, 9, 9, 9]
    with pytest.raises(ValueError, match="right hand side must be an ndarray, or a scalar"):
        m[0] = [1, 2, 3]


def test_methods_in_place():
    m = ulab.array([[1, 2, 3], [4, 5, 6]])
    assert list(m.flatten(order="F")) == [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    with pytest.raises(ValueError, match="flattening order"):
        m.flatten(order="X")
    assert m.transpose() is None and m.shape() == (3, 2)
    assert m.reshape((1, 6)) is m and m.shape() == (1, 6)
    with pytest.raises(ValueError, match="incompatible input/output shape"):
        m.reshape((4, 4))
    with pytest.raises(ValueError, match="shape must be a 2-tuple"):
        m.reshape([1, 6])
    assert len(m.asbytearray()) == 24


def test_linalg():
    b = ulab.array([[1, 2], [3, 4]])
    assert list(ulab.inv(b).flatten()) == pytest.approx([-2.0, 1.0, 1.5, -0.5])
    assert ulab.det(b) == pytest.approx(-2.0)
    with pytest.raises(ValueError, match="input matrix is singular"):  # no pivoting
        ulab.inv(ulab.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="only square matrices"):
        ulab.inv(ulab.array([[1, 2, 3]]))
    assert list(ulab.dot(b, b).flatten()) == [7.0, 10.0, 15.0, 22.0]
    with pytest.raises(ValueError, match="matrix dimensions do not match"):
        ulab.dot(b, ulab.array([[1, 2, 3]]))
    values, vectors = ulab.eig(ulab.array([[2, 1], [1, 2]]))
    assert sorted(values) == pytest.approx([1.0, 3.0]) and vectors.shape() == (2, 2)
    with pytest.raises(ValueError, match="asymmetric"):
        ulab.eig(b)
    assert repr(ulab.eye(3, k=1, dtype=ulab.uint8)) == "array([[0, 1, 0],\n\t [0, 0, 1],\n\t [0, 0, 0]], dtype=uint8)"
    assert ulab.zeros((2, 3), dtype=ulab.int16).shape() == (2, 3) and list(ulab.ones(3)) == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="integer or a 2-tuple"):
        ulab.zeros([2, 3])
    assert ulab.size(b) == 4 and ulab.size(b, axis=1) == 2
    with pytest.raises(MemoryError):
        ulab.zeros((1000, 1000))


def test_numerical():
    assert list(ulab.linspace(0, 10, 5)) == [0.0, 2.5, 5.0, 7.5, 10.0]
    arr, step = ulab.linspace(0, 1, 3, retstep=True)
    assert step == 0.5
    with pytest.raises(ValueError, match="at least 2"):
        ulab.linspace(0, 1, 1)
    m = ulab.array([[1, 2], [3, 4]])
    assert ulab.sum([1, 2, 3]) == 6.0 and ulab.mean(m) == 2.5
    assert list(ulab.std(m, axis=0)) == [1.0, 1.0] and ulab.sum(m, axis=1).shape() == (2, 1)
    with pytest.raises(ValueError, match="axis must be None, 0, or 1"):
        ulab.sum(m, axis=2)
    with pytest.raises(TypeError, match="tuple, list, range, or ndarray"):
        ulab.sum(5)
    assert ulab.max(ulab.array([-1, 5, -3], dtype=ulab.int16)) == -1  # int16 compared as uint16 (sic)
    assert ulab.argmax([3, 9, 9]) == 1 and ulab.min((4, 2, 8)) == 2
    assert repr(ulab.argmax(m, axis=0)) == "array([1, 1], dtype=uint16)"
    c = ulab.array([5, 3, 1, 4])
    assert ulab.roll(c, 1) is None and list(c) == [3.0, 1.0, 4.0, 5.0]  # to the left
    assert list(ulab.flip(c)) == [5.0, 4.0, 1.0, 3.0]
    assert list(ulab.diff(ulab.array([1, 4, 9, 16]))) == [3.0, 5.0, 7.0]
    # target -= stencil * x with stencil (1, -2, 1): an even n comes out negated on the board (sic)
    assert list(ulab.diff(ulab.array([1, 4, 9, 16]), n=2)) == [-2.0, -2.0]
    with pytest.raises(ValueError, match="n must be between 0, and 9"):
        ulab.diff(c, n=10)
    i8 = ulab.array([-1, 2, -3], dtype=ulab.int8)
    assert list(ulab.sort(i8)) == [2, -3, -1]  # int8 sorted as uint8 (sic)
    assert list(ulab.argsort(ulab.array([3, 1, 2]))) == [1, 2, 0]
    grid = ulab.array([[3, 1], [2, 4]])
    ulab.argsort(grid, axis=None)
    assert grid.shape() == (1, 4)  # argsort(axis=None) flattens its argument (sic)


def test_vectorised_poly_fft():
    assert ulab.sqrt(4) == 2.0 and ulab.sin([0, 0]).shape() == (1, 2)
    assert ulab.exp(ulab.array([[0, 0]])).shape() == (1, 2)
    assert ulab.cos("nope") is None
    assert list(ulab.polyfit([0, 1, 2, 3], [1, 3, 5, 7], 1).flatten()) == pytest.approx([2.0, 1.0], abs=1e-5)
    assert ulab.polyfit([1, 2, 3], 1).shape() == (2, 1)
    assert list(ulab.polyval([2, 1], [0, 1, 2])) == [1.0, 3.0, 5.0]
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    re, im = ulab.fft(ulab.array(x.tolist()))
    reference = np.fft.fft(x.astype(np.float64))
    assert np.abs(np.array(list(re)) - reference.real).max() < 1e-4
    assert np.abs(np.array(list(im)) - reference.imag).max() < 1e-4
    back, _ = ulab.ifft(re, im)
    assert np.abs(np.array(list(back)) - x).max() < 1e-5
    assert list(ulab.spectrum(ulab.array([1, 1, 1, 1]))) == [4.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="power of 2"):
        ulab.fft(ulab.array([1, 2, 3]))
    with pytest.raises(NotImplementedError, match="defined for ndarrays only"):
        ulab.fft([1, 2])


def test_scripts_import_ulab_as_on_the_board(maixpy):
    result = maixpy.run(code="import ulab as np\na = np.array([1, 2, 3])\nprint(np.mean(a), a.shape())\n"
                             "from ulab import numpy\n")
    assert "2.0 (1, 3)" in result.stdout
    assert result.exit_code == 1 and "cannot import name numpy" in result.stderr
