"""``REPORT/checkpoint.jsonl``: every finished image's record, so an interrupted run resumes.

The first line names the run's fingerprint; each later line is one record, appended and flushed
as its batch finishes. A line cut short by a kill is ignored (that image is simply evaluated
again). Records are reused only for the same fingerprint and the same image file (path, size,
modification time), so a changed model, option or image is never mixed into old numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from .errors import EvalError

NAME = "checkpoint.jsonl"
FORMAT = 1


class Checkpoint:
    def __init__(self, report: Path, fingerprint: str):
        self.path = Path(report) / NAME
        self.fingerprint = fingerprint
        self._fp: TextIO | None = None

    def load(self, fresh: bool) -> dict[str, dict]:
        """Records of an earlier run with this fingerprint, by sample key (empty when ``fresh``)."""
        if fresh or not self.path.is_file():
            return {}
        records: dict[str, dict] = {}
        with open(self.path, encoding="utf-8") as fp:
            header = _parse(fp.readline())
            if not header or header.get("maixemu_eval_checkpoint") != FORMAT:
                raise EvalError(
                    f"{self.path} is not a maixemu eval checkpoint: choose another --report folder (nothing was changed)"
                )
            if header.get("fingerprint") != self.fingerprint:
                raise EvalError(
                    f"{self.path.parent} holds a checkpoint of a run with another model, reference or options: "
                    "pass --fresh to start this run over in it, or another --report folder"
                )
            for line in fp:
                record = _parse(line)
                if record is not None and "key" in record:
                    records[record["key"]] = record
        return records

    def open(self, fresh: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fresh or not self.path.is_file():
            fp = self._fp = open(self.path, "w", encoding="utf-8")
            fp.write(json.dumps({"maixemu_eval_checkpoint": FORMAT, "fingerprint": self.fingerprint}) + "\n")
        else:
            fp = self._fp = open(self.path, "a", encoding="utf-8")
            if self.path.stat().st_size and not _ends_with_newline(self.path):
                fp.write("\n")  # a line cut short stays a broken line of its own
        fp.flush()

    def append(self, records: list[dict]) -> None:
        fp = self._fp
        if fp is None:
            raise RuntimeError("Checkpoint.append before open()")
        for record in records:
            fp.write(json.dumps(record, sort_keys=True) + "\n")
        fp.flush()

    def close(self) -> None:
        if self._fp is not None:
            self._fp.close()
            self._fp = None


def _parse(line: str) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fp:
        fp.seek(-1, 2)
        return fp.read(1) == b"\n"
