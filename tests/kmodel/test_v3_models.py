"""Real use of the V3 sample models: the face detector finds faces, MobileNet labels, MNIST reads.

Inputs are prepared like the golden vectors (PIL RGB/L, BILINEAR resize, HWC→CHW). The YOLOv2
region layer is decoded in the test as maixpy-api.md §1.11 describes, with the stock face
anchors of Appendix A. Face positions were read off the photos by eye (centre of the face in the
320×240 frame) and are checked to lie inside a detected box.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from _shared import shared_path
from maixemu.kmodel import load_kmodel

FACE_ANCHORS = (1.889, 2.5245, 2.9465, 3.94056, 3.99987, 5.3658, 5.155437, 6.92275, 6.718375, 9.01025)


def chw(path, size, mode="RGB") -> np.ndarray:
    img = Image.open(path).convert(mode).resize(size, Image.BILINEAR)
    arr = np.asarray(img, dtype=np.uint8)
    return np.ascontiguousarray(arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1))


def yolo2_region(out: np.ndarray, anchors, threshold=0.5, nms_value=0.3, in_w=320, in_h=240):
    """MaixPy's region layer (sipeed_yolo2.c as documented): boxes (x, y, w, h, prob, class)."""
    ch, lh, lw = out.shape
    n_anchor = len(anchors) // 2
    classes = ch // 5 - 5
    o = out.reshape(n_anchor, 5 + classes, lh, lw).astype(np.float64)

    def sigmoid(v):
        return 1.0 / (1.0 + np.exp(-v))

    tx, ty, tw, th, obj = sigmoid(o[:, 0]), sigmoid(o[:, 1]), o[:, 2], o[:, 3], sigmoid(o[:, 4])
    cls = o[:, 5:]
    e = np.exp(cls - cls.max(axis=1, keepdims=True))
    cls = e / e.sum(axis=1, keepdims=True)
    rows, cols = np.mgrid[0:lh, 0:lw]
    bx, by = (cols + tx) / lw, (rows + ty) / lh
    bw = np.exp(tw) * np.array(anchors[0::2])[:, None, None] / lw
    bh = np.exp(th) * np.array(anchors[1::2])[:, None, None] / lh
    prob = obj[:, None] * cls
    prob = np.where(prob > threshold, prob, 0.0).transpose(0, 2, 3, 1).reshape(-1, classes)
    boxes = np.stack([bx, by, bw, bh], -1).reshape(-1, 4)

    def iou(a, b):
        ox = min(a[0] + a[2] / 2, b[0] + b[2] / 2) - max(a[0] - a[2] / 2, b[0] - b[2] / 2)
        oy = min(a[1] + a[3] / 2, b[1] + b[3] / 2) - max(a[1] - a[3] / 2, b[1] - b[3] / 2)
        inter = 0.0 if ox < 0 or oy < 0 else ox * oy
        return inter / (a[2] * a[3] + b[2] * b[3] - inter)

    for k in range(classes):
        order = np.argsort(-prob[:, k], kind="stable")
        for i, a in enumerate(order):
            if prob[a, k] == 0:
                continue
            for b in order[i + 1 :]:
                if iou(boxes[a], boxes[b]) > nms_value:
                    prob[b, k] = 0.0
    found = []
    for b in range(len(boxes)):
        k = int(np.argmax(prob[b]))
        if prob[b, k] > threshold:
            x, y, w, h = boxes[b]
            x1, y1 = max(0, int(x * in_w - w * in_w / 2)), max(0, int(y * in_h - h * in_h / 2))
            x2, y2 = int(x * in_w + w * in_w / 2), int(y * in_h + h * in_h / 2)
            found.append((x1, y1, x2 - x1, y2 - y1, float(prob[b, k]), k))
    return found


@pytest.fixture(scope="module")
def face_model():
    return load_kmodel(shared_path("models", "v3", "face_detect_320x240.kmodel"))


@pytest.mark.parametrize("image,centre", [("face_21.jpg", (140, 110)), ("face_23.jpg", (90, 90)),
                                          ("face_26.jpg", (160, 120)), ("face_27.jpg", (100, 130))])
def test_face_detector_finds_the_face(face_model, image, centre):
    out = face_model.run(chw(shared_path("images", image), (320, 240)))[0]
    assert out.shape == (30, 15, 20) and out.dtype == np.float32
    boxes = yolo2_region(out, FACE_ANCHORS)
    assert boxes, f"no face found in {image}"
    cx, cy = centre
    hits = [b for b in boxes if b[0] <= cx <= b[0] + b[2] and b[1] <= cy <= b[1] + b[3]]
    assert hits, f"{image}: boxes {boxes} miss the face at {centre}"
    assert max(b[4] for b in hits) > 0.7
    assert all(20 <= b[2] <= 320 and 20 <= b[3] <= 260 for b in hits)


def test_face_detector_is_quiet_on_noise(face_model):
    x = np.random.default_rng(3).integers(0, 256, size=(3, 240, 320), dtype=np.uint8)
    assert yolo2_region(face_model.run(x)[0], FACE_ANCHORS, threshold=0.7) == []


@pytest.fixture(scope="module")
def mobilenet():
    labels = shared_path("models", "v3", "mobilenet_v1_labels.txt").read_text().splitlines()
    return load_kmodel(shared_path("models", "v3", "mobilenet_v1_0.75_1000class.kmodel")), labels


def test_mobilenet_labels_the_black_swan_and_the_teddy(mobilenet):
    model, labels = mobilenet
    for image, expected in (("coco_436551.jpg", "black swan"), ("coco_436603.jpg", "teddy")):
        probs = model.run(chw(shared_path("images", image), (224, 224)))[0]
        assert probs.shape == (1000,)
        assert abs(float(probs.sum()) - 1.0) < 1e-3
        assert labels[int(np.argmax(probs))].startswith(expected)


def test_mobilenet_sees_a_dog_in_dog_bmp(mobilenet):
    """dog.bmp (a husky next to a bicycle): the quantised 0.75 model's top-1 is 'mousetrap' (0.30,
    bit-identical to the reference vectors, so a property of the model, not of the emulator), but
    the ImageNet dog classes 151–268 together outweigh every other class and fill the next ranks."""
    model, labels = mobilenet
    probs = model.run(chw(shared_path("images", "dog.bmp"), (224, 224)))[0]
    top5 = np.argsort(-probs)[:5]
    assert sum(151 <= i <= 268 for i in top5) >= 3, [labels[i] for i in top5]
    assert probs[151:269].sum() > probs.max()
    assert any("husky" in labels[i] for i in top5)


def _digit(d: int) -> np.ndarray:
    img = Image.new("L", (28, 28), 0)
    draw = ImageDraw.Draw(img)

    def line(*p):
        draw.line(p, fill=255, width=3)

    def arc(box, start, end):
        draw.arc(box, start, end, fill=255, width=3)

    if d == 0:
        draw.ellipse((8, 4, 20, 24), outline=255, width=3)
    elif d == 1:
        line(14, 4, 14, 24)
    elif d == 3:
        arc((8, 4, 19, 14), 200, 90)
        arc((8, 13, 19, 24), 270, 160)
    elif d == 4:
        line(17, 4, 17, 24)
        line(17, 4, 7, 17)
        line(7, 17, 22, 17)
    elif d == 5:
        line(20, 5, 9, 5)
        line(9, 5, 9, 13)
        arc((7, 11, 20, 24), 220, 140)
    elif d == 7:
        line(7, 5, 21, 5)
        line(21, 5, 12, 24)
    elif d == 8:
        draw.ellipse((9, 4, 19, 13), outline=255, width=3)
        draw.ellipse((8, 13, 20, 24), outline=255, width=3)
    elif d == 9:
        draw.ellipse((8, 4, 19, 14), outline=255, width=3)
        line(19, 9, 17, 24)
    return np.asarray(img, dtype=np.uint8)[None].copy()


@pytest.mark.parametrize("digit", [0, 1, 3, 4, 5, 7, 8, 9])
def test_mnist_reads_drawn_digits(digit):
    model = load_kmodel(shared_path("models", "v3", "mnist.kmodel"))
    probs = model.run(_digit(digit))[0]
    assert probs.shape == (10,)
    assert abs(float(probs.sum()) - 1.0) < 1e-4
    assert int(np.argmax(probs)) == digit


def test_mnist_layers_as_maixpy_set_layers_sees_them():
    """kpu.set_layers(task, n): the output of layer n-1 with the device's types and shapes."""
    model = load_kmodel(shared_path("models", "v3", "mnist.kmodel"))
    x = _digit(7)
    expect = {1: ((16, 14, 14), np.uint8), 2: ((32, 7, 7), np.uint8), 8: ((10, 4, 4), np.uint8), 11: ((10,), np.float32)}
    for n, (shape, dtype) in expect.items():
        steps = list(model.trace(x, limit=n))
        assert len(steps) == n
        assert steps[-1].output.shape == shape and steps[-1].output.dtype == dtype
    assert model.input_chw == (1, 28, 28)
    assert [model.layer_output_typecode(i) for i in (0, 2, 5, 7, 8, 10)] == ["B", "f", "B", "B", "B", "f"]
    full = list(model.trace(x))
    np.testing.assert_array_equal(full[-1].output, model.run(x)[0])


def test_iris_float_input():
    model = load_kmodel(shared_path("models", "v3", "iris.kmodel"))
    assert model.inputs[0].shape == (4,) and model.input_chw is None
    setosa, virginica = model.run(np.array([5.1, 3.5, 1.4, 0.2]))[0], model.run(np.array([6.3, 3.3, 6.0, 2.5]))[0]
    assert int(np.argmax(setosa)) == 0 and int(np.argmax(virginica)) == 2
