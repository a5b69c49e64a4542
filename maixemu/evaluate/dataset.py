"""Reading ``DATA``: class folders, a ``path,label`` CSV, annotated images or a plain folder.

* classification: ``DATA/<class>/...`` (the layout of maix_train, aXeleRate and torchvision's
  ImageFolder) or a CSV of ``path,label`` (paths relative to the CSV, an optional header row);
* detection: images with a Pascal VOC ``.xml`` or YOLO ``.txt`` of the same name next to them;
* comparison only: any folder of images (with ``--reference``).

Listing is sorted, so sample ``i`` is the same image on every machine and in every run — which
is what lets a run resume and lets ``--jobs`` and ``--dask`` give identical results.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..host.camera import IMAGE_SUFFIXES
from . import annotations as ann
from .errors import EvalError
from .labels import map_names
from .report import REPORT_MARKER

TASKS = ("classify", "detect", "compare")


@dataclass(frozen=True)
class Sample:
    """One image of the dataset and its ground truth (``label`` or ``boxes``; neither when comparing)."""

    index: int
    path: str
    rel: str
    key: str
    label: int | None = None
    boxes: tuple[ann.Box, ...] | None = None


@dataclass
class Dataset:
    task: str
    root: Path
    samples: list[Sample]
    class_names: list[str]
    #: files that are not part of the evaluation, with why (shown and written to results.json)
    excluded: list[tuple[str, str]] = field(default_factory=list)
    layout: str = ""


def _is_image(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES and not path.name.startswith(".")


def _is_data_folder(path: Path, exclude: Path | None) -> bool:
    """False for hidden folders, maixemu eval reports (their plots are not images of the dataset) and
    ``exclude`` (this run's own report folder, marked or not yet)."""
    return (not path.name.startswith(".") and not (path / REPORT_MARKER).is_file()
            and (exclude is None or os.path.realpath(path) != os.path.realpath(exclude)))


def _walk_images(folder: Path, exclude: Path | None = None) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if _is_data_folder(Path(dirpath, d), exclude))
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if _is_image(path):
                found.append(path)
    return found


def sample_key(path: Path, rel: str) -> str:
    """Identity of an image for the checkpoint: its place, size and modification time."""
    st = path.stat()
    return f"{rel}|{st.st_size}|{st.st_mtime_ns}"


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def detect_task(data: Path, exclude: Path | None = None) -> str:
    """What DATA holds: a CSV or class folders → classify; annotated images → detect; else compare
    (``exclude``: the report folder, never part of DATA)."""
    if data.is_file():
        if data.suffix.lower() == ".csv":
            return "classify"
        raise EvalError(f"{data}: DATA must be a folder or a .csv of path,label")
    if not data.is_dir():
        raise EvalError(f"{data}: no such folder or file")
    top = [p for p in sorted(data.iterdir()) if _is_image(p)]
    images = top or _walk_images(data, exclude)
    if not images:
        raise EvalError(f"{data}: the folder holds no images (image files: {', '.join(sorted(IMAGE_SUFFIXES))}); "
                        "nothing to evaluate")
    if any(ann.annotation_for(p) is not None for p in images[:200]):
        return "detect"
    subdirs = [d for d in data.iterdir() if d.is_dir() and _is_data_folder(d, exclude) and _walk_images(d, exclude)]
    if subdirs and not top:
        return "classify"
    return "compare"


def load_dataset(data: Path, task: str, *, classes: int, labels: list[str] | None, limit: int | None = None,
                 exclude: Path | None = None) -> Dataset:
    """The samples of DATA for ``task``; refuses labels that do not match the model's ``classes``.
    Folders marked as maixemu reports, and ``exclude`` (this run's report), are not part of DATA."""
    data = Path(data)
    if task == "classify":
        dataset = (_read_csv(data, classes, labels) if data.is_file()
                   else _read_class_folders(data, classes, labels, exclude))
    elif task == "detect":
        dataset = _read_detection(data, classes, labels, exclude)
    elif task == "compare":
        images = _walk_images(data, exclude)
        dataset = Dataset("compare", data, [_sample(i, p, data) for i, p in enumerate(images)], labels or [], layout="images")
    else:  # pragma: no cover - argparse limits the choices
        raise EvalError(f"unknown task {task!r}")
    if not dataset.samples:
        raise EvalError(f"{data}: no images found for {task} (image files: {', '.join(sorted(IMAGE_SUFFIXES))})")
    if limit is not None:
        dataset.samples = dataset.samples[:limit]
    return dataset


def _sample(index: int, path: Path, root: Path, **truth) -> Sample:
    rel = _rel(path, root)
    return Sample(index, str(path.resolve()), rel, sample_key(path, rel), **truth)


def _read_class_folders(data: Path, classes: int, labels: list[str] | None, exclude: Path | None) -> Dataset:
    folders = [d for d in sorted(data.iterdir()) if d.is_dir() and _is_data_folder(d, exclude)]
    per_class = {d.name: _walk_images(d, exclude) for d in folders}
    per_class = {name: files for name, files in per_class.items() if files}
    if not per_class:
        raise EvalError(f"{data}: no class folders with images (expected DATA/<class>/<image>)")
    mapping = map_names(list(per_class), labels, classes, f"{data} (class folders)")
    names = labels if labels is not None else [str(i) for i in range(classes)]
    samples = []
    for name, files in per_class.items():
        for path in files:
            samples.append((path, mapping[name]))
    samples.sort(key=lambda item: _rel(item[0], data))
    excluded = [(_rel(p, data), "not inside a class folder") for p in sorted(data.iterdir()) if _is_image(p)]
    return Dataset(
        "classify", data, [_sample(i, p, data, label=label) for i, (p, label) in enumerate(samples)], names,
        excluded, layout="class folders",
    )


def _read_csv(data: Path, classes: int, labels: list[str] | None) -> Dataset:
    root = data.parent
    try:
        with open(data, newline="", encoding="utf-8-sig") as fp:
            rows = [row for row in csv.reader(fp) if row and any(cell.strip() for cell in row)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise EvalError(f"{data}: cannot read the CSV ({exc})") from None
    if rows and not (root / rows[0][0].strip()).is_file() and rows[0][0].strip().lower() in ("path", "file", "filename", "image"):
        rows = rows[1:]
    entries, excluded = [], []
    for number, row in enumerate(rows, start=1):
        if len(row) < 2:
            raise EvalError(f"{data}: row {number} {row!r} is not path,label")
        rel, label = row[0].strip(), row[1].strip()
        path = (root / rel) if not os.path.isabs(rel) else Path(rel)
        if not path.is_file():
            excluded.append((rel, "listed in the CSV but not found"))
            continue
        entries.append((path, label))
    names_used = sorted({label for _, label in entries})
    mapping = map_names(names_used, labels, classes, f"{data} (labels column)")
    names = labels if labels is not None else [str(i) for i in range(classes)]
    samples = [_sample(i, p, root, label=mapping[label]) for i, (p, label) in enumerate(entries)]
    return Dataset("classify", root, samples, names, excluded, layout="csv")


def _read_detection(data: Path, classes: int, labels: list[str] | None, exclude: Path | None) -> Dataset:
    images = _walk_images(data, exclude)
    index = {name: i for i, name in enumerate(labels)} if labels is not None else {}
    if labels is None:
        voc = next((a for a in map(ann.annotation_for, images) if a is not None and a.suffix == ".xml"), None)
        if voc is not None:
            raise EvalError(
                f"{voc}: VOC annotations name their classes; pass --labels FILE (one name per line, "
                "in the model's output order) so the names map to the model's class ids"
            )
    samples: list[Sample] = []
    excluded: list[tuple[str, str]] = []
    for path in images:
        annotation = ann.annotation_for(path)
        if annotation is None:
            excluded.append((_rel(path, data), "no annotation (.xml or .txt of the same name) next to it"))
            continue
        boxes = ann.read_voc(annotation, index) if annotation.suffix == ".xml" else ann.read_yolo(annotation, classes)
        samples.append(_sample(len(samples), path, data, boxes=boxes))
    names = labels if labels is not None else [str(i) for i in range(classes)]
    return Dataset("detect", data, samples, names, excluded, layout="annotated images")
