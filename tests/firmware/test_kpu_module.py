"""The ``KPU`` module's firmware behaviour: load errors, memory budget, fmap rules, set_outputs, yolo2.

Expected texts are maixpy-api.md's; expected shapes come from its worked MNIST example (§1.9).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import maixemu

from conftest import shared_path
from maixemu.firmware.state import current
from maixemu.firmware import KPU as kpu
from maixemu.firmware import image
from maixemu.host import storage

LOAD_2002 = "[MAIXPY]kpu: load error:2002, ERR_KMODEL_VERSION: only support kmodel V3/V4 now"


@pytest.fixture
def board(tmp_path):
    """A board whose /sd and /flash are tmp_path, full firmware, nothing in flash."""
    store = storage.Storage(tmp_path, tmp_path)
    current().storage = store
    return store


def v3(name: str):
    return shared_path("models", "v3", name)


def ai_image(w: int, h: int, gray: bool = False, value: int = 0) -> image.Image:
    img = image.Image(size=(w, h))
    if gray:
        img = img.to_grayscale()
    if value:
        img.draw_rectangle(0, 0, w, h, color=(value, value, value), fill=True)
    img.pix_to_ai()
    return img


# ---------------------------------------------------------------------------------------- load
def test_load_argument_errors(board):
    with pytest.raises(TypeError, match=r"^\[MAIXPY\]kpu: only accept int or string$"):
        kpu.load(1.5)
    with pytest.raises(ValueError) as err:
        kpu.load(0)
    assert str(err.value) == "[MAIXPY]kpu: model_addr must > 0 "
    with pytest.raises(ValueError) as err:
        kpu.load("/sd/model.bin")
    assert str(err.value) == "[MAIXPY]kpu: model format don't match, only supply .kmodel "


def test_unmapped_flash_address_gives_the_device_error_then_the_option(board):
    with pytest.raises(ValueError) as err:
        kpu.load(0x400000)
    assert str(err.value) == LOAD_2002 and err.value.args == (LOAD_2002,)  # the firmware's text only
    advice = maixemu.advice(err.value)  # maixemu's advice is beside it
    assert "0x400000" in advice and "--flash 0x400000=MODEL.kmodel" in advice


def test_missing_file_is_err_param(board):
    with pytest.raises(ValueError) as err:
        kpu.load("/sd/nothing.kmodel")
    assert str(err.value).startswith("[MAIXPY]kpu: load error:2001, ERR_PARAM: please check param")


@pytest.mark.parametrize(
    "relpath,hint",
    [
        ("v5/mobilenet_v2.kmodel", "kmodel V5"),
        ("v3/face_model_at_0x300000.kfpkg", "--flash-image"),
        ("v3/face_detect_320x240_be.kmodel", "kpu.load_flash"),
    ],
)
def test_files_kpu_load_rejects_with_2002(board, tmp_path, relpath, hint):
    source = shared_path("models", *relpath.split("/"))
    shutil.copy(source, tmp_path / "m.kmodel")
    with pytest.raises(ValueError) as err:
        kpu.load("/sd/m.kmodel")
    assert str(err.value) == LOAD_2002
    assert hint in maixemu.advice(err.value)


def test_load_flash_needs_the_byte_swapped_form(board):
    board.flash_map[0x600000] = v3("face_detect_320x240_be.kmodel")
    board.flash_map[0x300000] = v3("face_detect_320x240.kmodel")
    task = kpu.load_flash(0x600000, 1, 0xC000, 60000000)
    assert task.model_addr() == 0x600000
    with pytest.raises(ValueError, match=r"load_flash error:2002"):
        kpu.load_flash(0x300000, 1, 0xC000, 60000000)
    with pytest.raises(ValueError, match=r"load_flash arg format error"):
        kpu.load_flash(0x600000, 1)
    kpu.deinit(task)


def test_memory_budget_per_firmware_and_deinit_frees_it(board):
    board.flash_map[0x200000] = v3("mobilenet_v1_0.75_1000class.kmodel")
    with pytest.raises(ValueError) as err:
        kpu.load(0x200000)
    assert str(err.value) == "[MAIXPY]kpu: load error:2006, ERR_NO_MEM: memory not enough"
    assert "--firmware minimum" in maixemu.advice(err.value)
    current().kpu.budget.firmware = "minimum"
    task = kpu.load(0x200000)
    with pytest.raises(ValueError, match="2006"):
        kpu.load(0x200000)  # a second copy does not fit next to the first
    kpu.deinit(task)
    kpu.deinit(kpu.load(0x200000))


def test_at_most_five_models(board):
    board.flash_map[0x300000] = v3("mnist.kmodel")
    current().kpu.budget.firmware = "none"
    tasks = [kpu.load(0x300000) for _ in range(5)]
    with pytest.raises(ValueError, match=r"load error:2009, ERR_MODELS_FULL"):
        kpu.load(0x300000)
    for task in tasks:
        assert kpu.deinit(task, 1) is True
    with pytest.raises(TypeError, match="kpu_net type error"):
        kpu.deinit("task")


# ----------------------------------------------------------------------------------- forward
@pytest.fixture
def mnist(board):
    board.flash_map[0x300000] = v3("mnist.kmodel")
    task = kpu.load(0x300000)
    yield task
    kpu.deinit(task)


@pytest.mark.parametrize(
    "layers,expect",
    [
        (1, ("B", 14, 14, 16, 14 * 14 * 16 - 1, 0)),
        (2, ("B", 7, 7, 32, 7 * 7 * 32 - 1, 1)),
        (8, ("B", 4, 4, 10, 4 * 4 * 10 - 1, 7)),
        (11, ("f", 40, 1, 1, 40, 10)),
        (0, ("f", 40, 1, 1, 40, 10)),
    ],
)
def test_mnist_fmap_shapes_follow_the_last_executed_layer(mnist, layers, expect):
    assert kpu.set_layers(mnist, layers) is True
    fm = kpu.forward(mnist, ai_image(28, 28, gray=True, value=30))
    assert (fm.typecode(), fm.w(), fm.h(), fm.ch(), fm.size(), fm.index()) == expect
    values = fm[:]
    assert isinstance(values, tuple)
    assert len(values) == (fm.size() // 4 if fm.typecode() == "f" else fm.size())
    if fm.typecode() == "f":
        assert sum(values) == pytest.approx(1.0, abs=1e-5)  # softmax


def test_set_layers_past_the_end_prints_and_returns_false(mnist, capsys):
    assert kpu.set_layers(mnist, 12) is False
    assert capsys.readouterr().out == "err: set layers_length to 12, but max 11\r\n"


def test_fmap_object_rules(mnist):
    kpu.set_layers(mnist, 1)
    fm = kpu.forward(mnist, ai_image(28, 28, gray=True, value=200))
    assert fm[0] == fm[:1][0] and fm[-1] == fm[:][-1]
    with pytest.raises(OSError, match="only slices with step=1"):
        fm[::2]
    with pytest.raises(IndexError):
        fm[fm.size()]
    tile = kpu.fmap(fm, 3)
    assert (tile.width(), tile.height(), tile.format()) == (14, 14, image.GRAYSCALE)
    assert tile._ai_array() is None  # kpu.fmap images have no AI buffer
    before = tile.get_pixel(5, 5)
    kpu.forward(mnist, ai_image(28, 28, gray=True, value=10))
    assert tile.get_pixel(5, 5) == fm[3 * 196 + 5 * 14 + 5]  # the tile shares the fmap's memory
    assert isinstance(before, int)
    with pytest.raises(ValueError) as err:
        kpu.fmap(fm, 16)
    assert str(err.value) == "[MAIXPY]kpu: ch err,input 0~16\r\n"
    kpu.set_layers(mnist, 0)
    with pytest.raises(ValueError) as err:
        kpu.fmap(kpu.forward(mnist, ai_image(28, 28, gray=True)), 0)
    assert str(err.value) == "[MAIXPY]kpu: can't convet float fmap yet\r\n"


def test_image_checks_print_the_firmware_lines(mnist, capsys):
    with pytest.raises(ValueError) as err:
        kpu.forward(mnist, ai_image(32, 28, gray=True))
    assert str(err.value).startswith("[MAIXPY]kpu: check img format err!\r\n")  # then maixemu's hint
    assert capsys.readouterr().out == "[MAIXPY]kpu: img w=32,h=28, but model w=28,h=28\r\n"
    with pytest.raises(ValueError):
        kpu.forward(mnist, ai_image(28, 28))
    assert capsys.readouterr().out == "[MAIXPY]kpu: RGB img, but model channel=1\r\n"
    with pytest.raises(ValueError, match="input not support"):
        kpu.forward(mnist, (1, 2, 3))


def test_float_input_list_on_a_cpu_only_model(board):
    board.flash_map[0x300000] = v3("iris.kmodel")
    task = kpu.load(0x300000)
    fm = kpu.forward(task, [5.1, 3.5, 1.4, 0.2])  # a setosa
    scores = fm[:]
    assert fm.typecode() == "f" and len(scores) == 3
    assert scores.index(max(scores)) == 0
    with pytest.raises(ValueError, match=r"check input list format err"):
        kpu.forward(task, [])
    with pytest.raises(ValueError) as err:
        kpu.forward(task, ai_image(4, 1))
    assert str(err.value) == "[MAIXPY]kpu: first layer not conv layer!\r\n"
    kpu.deinit(task)


def test_v4_needs_set_outputs(board, capsys):
    board.flash_map[0x500000] = shared_path("models", "v4", "yolo_20class.kmodel")
    task = kpu.load(0x500000)
    img = ai_image(320, 240)
    with pytest.raises(OSError) as err:
        kpu.forward(task, img)
    assert str(err.value) == "ERR_OUTPUTS_SET: need kpu.set_outputs() to set shape"
    assert "8750" in maixemu.advice(err.value)
    assert kpu.set_outputs(task, 0, 10, 7, 120) is False
    assert "w,c,ch size not match output size" in capsys.readouterr().out
    assert kpu.set_outputs(task, 3, 10, 7, 125) is False
    assert "kmodel output idx 3 out of range" in capsys.readouterr().out
    with pytest.raises(ValueError, match="set_outputs arg format error"):
        kpu.set_outputs(task, 0, 10, 7)
    assert kpu.set_outputs(task, 0, 10, 7, 125) is True
    fm = kpu.forward(task, img)
    assert (fm.typecode(), fm.w(), fm.h(), fm.ch(), fm.size()) == ("f", 10, 7, 125, 8750 * 4)
    kpu.deinit(task)


def test_run_yolo2_returns_none_when_nothing_is_found(board):
    board.flash_map[0x300000] = v3("face_detect_320x240.kmodel")
    task = kpu.load(0x300000)
    with pytest.raises(ValueError):
        kpu.init_yolo2(task, 1.5, 0.3, 5, (1.0,) * 10)
    with pytest.raises(ValueError, match="^requested length 10 but object has length 8$"):  # DETAILED error reporting
        kpu.init_yolo2(task, 0.5, 0.3, 5, (1.0,) * 8)
    anchors = (1.889, 2.5245, 2.9465, 3.94056, 3.99987, 5.3658, 5.155437, 6.92275, 6.718375, 9.01025)
    assert kpu.init_yolo2(task, 0.5, 0.3, 5, anchors) is True
    assert kpu.run_yolo2(task, ai_image(320, 240)) is None  # a black frame: no face, None not []
    assert repr(task.net_arg()).startswith('{"threshold":0.500000, "nms_value":0.300000, "anchor_number":5')
    kpu.deinit(task)


def test_face_encode_and_compare():
    a = kpu.face_encode([0.5, -1.0, 0.25, 0.0])
    assert isinstance(a, bytearray) and len(a) == 4
    assert kpu.face_compare(a, a) == pytest.approx(100.0)
    b = kpu.face_encode([-0.5, 1.0, -0.25, 0.0])
    assert kpu.face_compare(a, b) == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="compare feature must in same dim"):
        kpu.face_compare(a, bytearray(3))
    with pytest.raises(ValueError, match="feature dim"):
        kpu.face_encode([0.0] * 513)
    assert np.isfinite(kpu.face_compare(a, kpu.face_encode([1, 2, 3, 4])))


# ------------------------------------------------------------------- netinfo, memtest, classifier
def test_netinfo_lists_mnist_layers_as_the_firmware_does(mnist, capsys):
    infos = kpu.netinfo(mnist)
    assert len(infos) == 11
    first = infos[0]
    # layer 0: conv 28x28x1 -> 14x14x16, 3x3 (kernel_type 1), max 2x2 stride 2 (pool_type 1)
    assert (first.wi(), first.hi(), first.chi(), first.wo(), first.ho(), first.cho()) == (28, 28, 1, 14, 14, 16)
    assert (first.kernel_type(), first.pool_type(), first.dw(), first.type()) == (1, 1, 0, 10240)
    assert (infos[7].kernel_type(), infos[7].pool_type(), infos[7].cho()) == (0, 0, 10)
    assert [i.type() for i in infos[2:6]] == [12, 20, 18, 11]  # DEQUANTIZE, FLATTEN, FC, QUANTIZE
    assert infos[2].wi() == 0 and infos[2].index() == 2
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith('{"index":0, "type":"K210_CONV", "wi":28, "hi":28')


def test_memtest_prints_two_lines_in_kb(capsys):
    assert kpu.memtest() is None
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("###free gc heap memory : ") and lines[0].endswith(" KB")
    assert lines[1].startswith("###free sys heap memory: ") and lines[1].endswith(" KB")


def test_self_learning_classifier_separates_two_kinds_of_picture(mnist):
    clf = kpu.classifier(mnist, 2, 4)
    dark, light = ai_image(28, 28, gray=True, value=10), ai_image(28, 28, gray=True, value=240)
    assert clf.add_class_img(dark) == 0
    assert clf.add_class_img(light) == 1
    for value in (20, 30, 220, 230):
        clf.add_sample_img(ai_image(28, 28, gray=True, value=value))
    clf.train()
    assert clf.predict(ai_image(28, 28, gray=True, value=15))[0] == 0
    index, distance = clf.predict(ai_image(28, 28, gray=True, value=235))
    assert index == 1 and distance >= 0.0
    with pytest.raises(ValueError, match="model, class num, sample num"):
        kpu.classifier(mnist, 2)


def test_class_api_runs_and_decodes(board, capsys):
    from maixemu.firmware.maix_class_api import KPU, feature_compare

    shutil.copy(v3("mnist.kmodel"), board.sd_dir / "mnist.kmodel")
    net = KPU()
    net.load_kmodel("/sd/mnist.kmodel")
    assert "model load succeed" in capsys.readouterr().out
    with pytest.raises(OSError, match="Image formart error, use pix_to_ai"):
        net.run_with_output(image.Image(size=(28, 28)).to_grayscale())
    probs = net.run_with_output(ai_image(28, 28, gray=True, value=30), getlist=True)
    assert len(probs) == 10 and sum(probs) == pytest.approx(1.0, abs=1e-5)
    feature = net.run_with_output(ai_image(28, 28, gray=True, value=30), get_feature=True)
    assert sum(v * v for v in feature) == pytest.approx(1.0, abs=1e-5)
    # kpu_algorithm.c calCosinDistance: (0.5 + 0.5 * dot) * 100, so a unit vector against itself scores 100.
    assert feature_compare(feature, feature) == pytest.approx(100.0, abs=1e-4)
    with pytest.raises(ValueError, match="feature len error"):
        feature_compare([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="size error!"):
        net.load_kmodel(0x300000)
    net.deinit()
