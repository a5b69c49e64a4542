"""Errors of ``maixemu eval``: a refused dataset or option says what is wrong and what to do."""

from __future__ import annotations


class EvalError(Exception):
    """The evaluation cannot start (bad option, dataset or labels): one line for the user, exit 2."""


class MissingExtra(EvalError):
    """An optional package is needed for what was asked (``--reference``, ``--dask``)."""

    def __init__(self, package: str, why: str):
        super().__init__(
            f"{why} needs the package {package}: pip install {package}  (or pip install \"maixemu[eval]\" for all of eval's extras)"
        )
        self.package = package


class Undecodable(Exception):
    """One image could not be read: it is listed and skipped, the run goes on."""
