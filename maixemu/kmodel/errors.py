"""Loader and runtime errors for kmodel files.

Every problem with a model file surfaces as a :class:`KmodelError` subclass whose message names the
byte offset and the field that is wrong, so a user can tell a truncated download from an
unsupported model without reading our code.
"""

from __future__ import annotations


class KmodelError(Exception):
    """Base class of every error raised while reading or running a kmodel."""

    def __init__(self, message: str, *, offset: int | None = None, field: str | None = None):
        self.offset = offset
        self.field = field
        where = []
        if field is not None:
            where.append(f"field {field}")
        if offset is not None:
            where.append(f"offset 0x{offset:x}")
        full = f"{message} ({', '.join(where)})" if where else message
        super().__init__(full)


class KmodelFormatError(KmodelError):
    """The bytes do not form a valid kmodel: truncated, corrupt size/offset/count, bad layout."""


class KmodelVersionError(KmodelError):
    """A kmodel of a version or container the emulator (or the firmware) does not run.

    ``firmware_message`` is what MaixPy's ``kpu.load`` reports for such a file.
    """

    firmware_code = 2002
    firmware_message = "ERR_KMODEL_VERSION: only support kmodel V3/V4 now"


class KmodelUnsupportedError(KmodelError):
    """A valid model that uses a layer type, opcode or register setting we do not implement."""


class KmodelRuntimeError(KmodelError):
    """A model that loaded but cannot run with the given input (wrong shape, dtype, first layer)."""
