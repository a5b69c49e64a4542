"""``kpu.classifier``: MaixPy's self-learning classifier on top of a feature-extractor model.

The firmware's algorithm is closed source; maixpy-api.md §1.15 documents the interface only. We
use the documented suggestion: features are the model's L2-normalised outputs, ``train`` runs
k-means seeded with the class images' features, ``predict`` returns the nearest centroid and its
Euclidean distance. Saved files are maixemu's own format (an ``.npz`` under the device path), not
the device's.
"""

from __future__ import annotations

import numpy as np

from ..state import current as _board
from .net import check_net, kpu_net
from .run import run


def _feature(model_net, img) -> np.ndarray:
    fm = run(check_net(model_net, "model"), img, 0, "classifier")
    values = np.asarray(fm[:], dtype=np.float64)
    norm = np.linalg.norm(values)
    return values / norm if norm else values


class classifier:  # noqa: N801 - the firmware's type name
    def __init__(self, model=None, class_num=None, sample_num=None, fea_len: int = 0):
        if model is None or class_num is None or sample_num is None:
            raise ValueError("model, class num, sample num")
        if not isinstance(model, kpu_net):
            raise ValueError("model")
        self._net = model
        self._class_num = int(class_num)
        self._sample_num = int(sample_num)
        self._classes: list[np.ndarray] = []
        self._samples: list[np.ndarray] = []
        self._centroids: np.ndarray | None = None

    def add_class_img(self, img, idx: int | None = None) -> int:
        feature = _feature(self._net, img)
        if idx is not None and 0 <= idx < len(self._classes):
            self._classes[idx] = feature
            return idx
        if len(self._classes) >= self._class_num:
            raise OSError(12, "classes are full")
        self._classes.append(feature)
        return len(self._classes) - 1

    def add_sample_img(self, img) -> int:
        if len(self._samples) >= self._sample_num:
            raise OSError(12, "samples are full")
        self._samples.append(_feature(self._net, img))
        return len(self._samples) - 1

    def rm_class_img(self) -> int:
        if self._classes:
            self._classes.pop()
        return len(self._classes)

    def rm_sample_img(self) -> int:
        if self._samples:
            self._samples.pop()
        return len(self._samples)

    def train(self) -> None:
        if not self._classes:
            raise OSError(22, "add class images before train()")
        centroids = np.stack(self._classes)
        if self._samples:
            points = np.concatenate([centroids, np.stack(self._samples)])
            for _ in range(20):
                distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(-1)
                labels = distances.argmin(axis=1)
                updated = np.stack(
                    [points[labels == k].mean(axis=0) if np.any(labels == k) else centroids[k] for k in range(len(centroids))]
                )
                if np.allclose(updated, centroids):
                    break
                centroids = updated
        self._centroids = centroids

    def predict(self, img) -> tuple[int, float]:
        centroids = self._centroids if self._centroids is not None else (np.stack(self._classes) if self._classes else None)
        if centroids is None:
            raise OSError(22, "add class images (and train) before predict()")
        feature = _feature(self._net, img)
        distances = np.sqrt(((centroids - feature) ** 2).sum(axis=1))
        best = int(distances.argmin())
        return best, float(distances[best])

    def save(self, path: str) -> None:
        centroids = self._centroids if self._centroids is not None else np.stack(self._classes)
        with _board().storage.open(path, "wb") as fh:  # into the run's layer, never over a user file
            np.savez(fh, centroids=centroids, class_num=self._class_num, sample_num=self._sample_num)

    @staticmethod
    def load(model, path, class_num=None, sample_num=None, fea_len: int = 0):
        if not isinstance(model, kpu_net):
            raise ValueError("must be model")
        if not isinstance(path, str):
            raise ValueError("path err")
        with _board().storage.open(path, "rb") as fh, np.load(fh) as data:
            centroids = data["centroids"]
            classes = int(class_num if class_num is not None else data["class_num"])
            samples = int(sample_num if sample_num is not None else data["sample_num"])
        obj = classifier(model, classes, samples, fea_len)
        obj._classes = list(centroids)
        obj._centroids = centroids
        return obj, classes, samples
