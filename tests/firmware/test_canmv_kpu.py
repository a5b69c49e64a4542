"""CanMV's ``maix`` module and both of its ``KPU`` APIs against the firmware source.

Sources (kendryte/canmv): ``modMaix.c`` (module table), ``maix_kpu/Maix_kpu.c`` on ``main`` (the
released API), ``maix_kpu/maix_kpu.c`` and ``kpu_helper.c`` on ``feat/kpu``, and ``kpu_algorithm.c``
on both. Expected numbers are those C formulas evaluated here independently (float64 references
with float32 tolerances where the C code is single precision); expected texts are the C strings.
"""

from __future__ import annotations

import errno
import hashlib
import io
import shutil
import struct

import numpy as np
import PIL.Image
import pytest

import maixemu

from conftest import SHARED_DIR, shared_path
from maixemu.firmware.state import current
from maixemu.firmware import image, maix
from maixemu.firmware.kpu import algorithm, probe
from maixemu.firmware.kpu.canmv import KPU
from maixemu.host import storage

CANMV = SHARED_DIR / "scripts" / "canmv_examples" / "01-K210"
NEW, OLD = CANMV / "98-KPU_NEW", CANMV / "99-KPU"
FACE_ANCHORS = (0.1075, 0.126875, 0.126875, 0.175, 0.1465625, 0.2246875, 0.1953125, 0.25375, 0.2440625,
                0.351875, 0.341875, 0.4721875, 0.5078125, 0.6696875, 0.8984375, 1.099687, 2.129062, 2.425937)
FACE_21_CENTRE = (150, 105)  # hand-marked centre of the face in ../shared/images/face_21.jpg


@pytest.fixture
def card(tmp_path):
    """/sd and /flash in tmp_path; ``card.flash(addr, path)`` maps a file at a flash address."""
    store = storage.Storage(tmp_path, tmp_path)
    board = current()
    board.storage = store
    board.kpu.log.keep = True

    class Card:
        sd = tmp_path

        @staticmethod
        def put(name: str, source) -> str:
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(source, bytes):
                target.write_bytes(source)
            else:
                shutil.copy(source, target)
            return "/sd/" + name

        @staticmethod
        def flash(address: int, source) -> None:
            store.flash_map[address] = source

    return Card


def model(*parts: str):
    return shared_path("scripts", "canmv_examples", "01-K210", *parts)


def photo(name: str, size: tuple[int, int] | None = None) -> image.Image:
    """A shared photo (copied onto the card) as an image with its AI buffer filled, as a snapshot has it."""
    shutil.copy(shared_path("images", name), storage.current().sd_dir / name)
    img = image.Image("/sd/" + name)
    if size is not None and (img.width(), img.height()) != size:
        canvas = image.Image(size=size)
        canvas.draw_image(img, 0, 0)
        img = canvas
    img.pix_to_ai()
    return img


def flat(w: int, h: int, value: int = 0, gray: bool = False) -> image.Image:
    img = image.Image(size=(w, h))
    if gray:
        img = img.to_grayscale()
    if value:
        img.draw_rectangle(0, 0, w, h, color=(value, value, value), fill=True)
    img.pix_to_ai()
    return img


def f32(x: float) -> float:
    return float(np.float32(x))


# ------------------------------------------------------------------------------------ the module
def test_maix_module_is_maix_plus_kpu_as_modmaix_c_lists_it():
    from maixemu.firmware import Maix

    assert set(maix.__all__) == {"FPIOA", "GPIO", "I2S", "FFT", "mic_array", "freq", "utils", "config", "KPU"}
    for name in ("GPIO", "FPIOA", "I2S", "FFT", "freq", "utils", "config"):
        assert getattr(maix, name) is getattr(Maix, name)  # the same pins, mux and clocks under both names
    assert not hasattr(maix, "Audio")  # commented out in modMaix.c
    assert maix.KPU is KPU


def test_maix_is_what_a_script_imports(maixpy):
    result = maixpy.run(code="from maix import GPIO, FPIOA, utils, freq, config, I2S, FFT, KPU\n"
                             "print(GPIO.GPIOHS0, type(KPU()).__name__, freq.get())\n"
                             "from maix import Audio\n")
    assert result.lines[0].startswith("0 KPU ")
    assert result.exit_code == 1 and "ImportError" in result.stderr and "Audio" in result.stderr


# ------------------------------------------------------------------------------------ kpu_algorithm.c
@pytest.mark.parametrize("x", [0.0, 1.0, -1.0, 3.5, -7.25, 20.0, -100.0])
def test_sigmoid_is_the_float32_formula(x):
    expected = 1.0 / (1.0 + np.exp(-np.float64(x)))
    assert algorithm.sigmoid(x) == pytest.approx(expected, rel=2e-7, abs=1e-38)
    assert algorithm.sigmoid(x) == f32(algorithm.sigmoid(x))  # a float32 value
    assert KPU.sigmoid(0.0) == 0.5


def test_softmax_subtracts_the_maximum_and_normalises():
    values = [1.0, 2.0, 3.0, -4.0, 1000.0, 999.0]
    e = np.exp(np.array(values) - max(values))
    expected = e / e.sum()
    got = KPU.softmax(values)
    assert got == pytest.approx(expected.tolist(), rel=1e-6, abs=1e-30)
    assert sum(got) == pytest.approx(1.0, abs=1e-6)
    assert KPU.softmax([]) == []


def test_feature_score_is_half_plus_half_dot_times_100():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=192), rng.normal(size=192)
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    assert algorithm.feature_score(a, b) == pytest.approx((0.5 + 0.5 * float(a @ b)) * 100, abs=1e-4)
    unit = [1.0, 0.0, 0.0]
    assert KPU.feature_compare(unit, unit) == 100.0
    assert KPU.feature_compare(unit, [0.0, 1.0, 0.0]) == 50.0
    assert KPU.feature_compare(unit, [-1.0, 0.0, 0.0]) == 0.0
    # Not normalised by the firmware: the raw dot product goes in.
    assert KPU.feature_compare([2.0, 0.0], [3.0, 0.0]) == 350.0


def test_l2normalize_divides_by_the_root_of_the_sum_of_squares():
    x = np.array([3.0, 4.0, 0.0, -12.0], np.float32)
    assert algorithm.l2normalize(x).tolist() == pytest.approx([3 / 13, 4 / 13, 0.0, -12 / 13], rel=1e-7)


def _lp_reference(features: np.ndarray, weights: np.ndarray) -> list[list[float]]:
    """lp_recog_process in float64: head k reads chunk k of the features, its weights, then its bias."""
    chunk = features.size // 7
    heads, offset = [], 0
    for k, (logits, count) in enumerate(zip((31, 24, 34, 34, 34, 34, 34), (51584, 39936) + (56576,) * 5)):
        w = weights[offset: offset + logits * chunk].reshape(logits, chunk).astype(np.float64)
        bias = weights[offset + count: offset + count + logits].astype(np.float64)
        heads.append((w @ features[k * chunk:(k + 1) * chunk].astype(np.float64) + bias).tolist())
        offset += count + logits
    return heads


def test_lp_recog_heads_follow_the_weight_layout_of_lp_weight_bin():
    assert algorithm.LP_WEIGHT_BYTES == 1498500  # the demos' lp_weight.bin
    rng = np.random.default_rng(3)
    features = rng.normal(size=11648).astype(np.float32)  # lp_recog.kmodel: 224 x 4 x 13 floats
    weights = rng.normal(size=1498500 // 4).astype(np.float32)
    heads = algorithm.lp_recog(features, weights.tobytes())
    assert [len(h) for h in heads] == [31, 24, 34, 34, 34, 34, 34]
    assert all(isinstance(h, tuple) for h in heads)
    for got, want in zip(heads, _lp_reference(features, weights)):
        assert got == pytest.approx(want, rel=1e-4, abs=2e-3)
    with pytest.raises(ValueError, match="lp_weight.bin"):
        algorithm.lp_recog(features, weights[:1000].tobytes())


# ------------------------------------------------------------------------------------ kpu_helper.c
def test_probe_sums_the_declared_bodies_of_v3_and_v4_headers():
    v3 = struct.pack("<7I", 3, 0, 0, 2, 0, 0, 1) + struct.pack("<2I", 0, 10) + struct.pack("<4I", 1, 100, 2, 50)
    assert probe.model_size(v3) == 28 + 8 + 16 + 150
    assert probe.model_size(struct.pack("<7I", 3, 0, 1, 2, 0, 0, 1)) == -1  # arch != 0
    assert probe.model_size(v3[:40]) == -1  # layer headers past the buffer
    # V4: 40-byte header, inputs x (range + shape), outputs x range, constants, then node headers.
    v4 = struct.pack("<10I", 0x4B4D444C, 4, 0, 1, 8, 0, 1, 1, 1, 0) + bytes(16 + 16 + 16 + 8) + struct.pack("<2I", 7, 300)
    assert probe.model_size(v4) == 40 + 48 + 8 + 8 + 300
    v5 = struct.pack("<10I", 0x4B4D444C, 5, 0, 1, 0, 0, 0, 0, 0, 0)
    assert probe.model_size(v5) == -1  # no nncase v1 runtime in the build
    assert probe.model_size(b"\x00" * 64) == -1


def test_probe_agrees_with_the_demo_files_the_demos_load_from_the_card():
    for path in (NEW / "yolo_face_detect" / "face_detect_320x240.kmodel", NEW / "face_recognization" / "ld5.kmodel",
                 NEW / "licenseplate_recognization" / "lp_detect.kmodel", NEW / "self_learn_classifier" / "mb-0.25.kmodel"):
        if not path.exists():
            pytest.skip("../shared/scripts/canmv_examples is absent")
        data = path.read_bytes()
        assert probe.model_size(data) == len(data), path.name
    # The two files the 98-KPU_NEW demos load from flash instead ("this model is a little big"):
    # their files carry padding past the declared size, so load() from the card refuses them.
    for path in (NEW / "face_recognization" / "feature_extraction.kmodel",
                 NEW / "head_body_detect" / "uint8_head_detect_v1_old.kmodel"):
        data = path.read_bytes()
        assert 0 < probe.model_size(data) < len(data), path.name


# ------------------------------------------------------------------------------------ released API
def test_released_helpers_work_on_the_class_and_on_an_instance():
    kpu = KPU()
    assert KPU.sigmoid(1.0) == kpu.sigmoid(1.0) == KPU.sigmoid(kpu, 1.0) == f32(1 / (1 + np.exp(-1.0)))
    assert KPU.sigmoid(2) == kpu.sigmoid(True + 1)  # mp_obj_get_float takes ints
    assert KPU.softmax([0.0, 0.0]) == kpu.softmax([0.0, 0.0]) == KPU.softmax(kpu, [0.0, 0.0]) == [0.5, 0.5]
    assert KPU.feature_compare([1.0], [1.0]) == kpu.feature_compare([1.0], [1.0]) == 100.0
    for call in (lambda: KPU.sigmoid(), lambda: KPU.sigmoid(1.0, 2.0), lambda: kpu.sigmoid(kpu)):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(TypeError, match="can't convert str to float"):
        KPU.sigmoid("1")
    with pytest.raises(TypeError, match="Can't convert tuple to list"):
        KPU.softmax((1.0, 2.0))
    with pytest.raises(ValueError, match="^need input 2 feature$"):
        KPU.feature_compare([1.0])
    with pytest.raises(ValueError, match="^feature len error$"):
        kpu.feature_compare([1.0], [1.0, 2.0])
    with pytest.raises(TypeError, match="isn't a tuple or list"):
        KPU.feature_compare(1, [1.0])


def test_load_kmodel_messages_and_errors(card, capsys):
    kpu = KPU()
    path = card.put("KPU/m/ld5.kmodel", model("99-KPU", "face_attribute", "ld5.kmodel"))
    kpu.load_kmodel(path)
    size = (card.sd / "KPU/m/ld5.kmodel").stat().st_size
    assert capsys.readouterr().out == f"model size {size} \r\nmodel load succeed\r\n"
    with pytest.raises(ValueError, match="^open file error, please check file path!"):
        kpu.load_kmodel("/sd/none.kmodel")
    with pytest.raises(ValueError, match="^invalid path input$"):
        kpu.load_kmodel()
    for bad, text in ((0, "path error!"), (1.5, "path error!")):
        with pytest.raises(ValueError, match=f"^{text}$"):
            kpu.load_kmodel(bad)
    with pytest.raises(ValueError, match="^size error!$"):
        kpu.load_kmodel(0x300000)
    with pytest.raises(OSError, match="^Failed to init model$") as info:
        kpu.load_kmodel(0x300000, 1000)  # nothing mapped: erased flash is no model
    assert "0x300000" in maixemu.advice(info.value)
    card.put("junk.kmodel", b"\x01" * 4096)
    with pytest.raises(OSError, match="^Failed to init model"):
        kpu.load_kmodel("/sd/junk.kmodel")


def test_load_kmodel_from_flash_reads_the_given_size(card, capsys):
    source = model("99-KPU", "face_attribute", "ld5.kmodel")
    card.flash(0x300000, source)
    kpu = KPU()
    kpu.load_kmodel(0x300000, source.stat().st_size)
    assert capsys.readouterr().out == "model load succeed\r\n"
    assert "model_size  : %d\n" % source.stat().st_size in repr(kpu)
    with pytest.raises(OSError, match="^Failed to init model"):
        kpu.load_kmodel(0x300000, 4096)  # a truncated read is no model


def test_run_with_output_returns_lists_only_when_asked(card):
    kpu = KPU()
    kpu.load_kmodel(card.put("ld5.kmodel", model("99-KPU", "face_attribute", "ld5.kmodel")))
    img = flat(128, 128, 90)
    assert kpu.run_with_output(img) is None
    out = kpu.run_with_output(img, getlist=True)
    assert len(out) == 10 and all(isinstance(v, float) for v in out)
    feature = kpu.run_with_output(img, get_feature=True)
    assert feature == pytest.approx((np.array(out) / np.linalg.norm(out)).tolist(), rel=1e-5)
    assert kpu.run_with_output(img, getlist=True, get_feature=True) == out  # getlist wins
    # A path is read as raw input bytes (planar RGB), not decoded as a picture.
    ai = np.asarray(img._ai_array(), np.uint8).tobytes()
    assert kpu.run_with_output(card.put("input.bin", ai), getlist=True) == out
    with pytest.raises(ValueError, match="^invalid input$"):
        kpu.run_with_output()
    with pytest.raises(ValueError, match="^invalid input$"):
        kpu.run_with_output(123)
    with pytest.raises(OSError, match="^Image formart error, use pix_to_ai\\(\\) method to convert for kpu$"):
        kpu.run_with_output(image.Image(size=(128, 128)))


def test_get_feature_refuses_more_than_256_values(card):
    kpu = KPU()
    kpu.load_kmodel(card.put("f.kmodel", model("99-KPU", "yolo_face_detect", "face_detect_320x240.kmodel")))
    with pytest.raises(ValueError, match="^feature len out of 256\r\n$"):
        kpu.run_with_output(flat(320, 240), get_feature=True)


def test_regionlayer_yolo2_finds_the_face_in_image_coordinates(card):
    kpu = KPU()
    kpu.load_kmodel(card.put("f.kmodel", model("99-KPU", "yolo_face_detect", "face_detect_320x240.kmodel")))
    kpu.init_yolo2(FACE_ANCHORS, anchor_num=9, img_w=320, img_h=240, net_w=320, net_h=240, layer_w=10,
                   layer_h=8, threshold=0.5, nms_value=0.2, classes=1)
    kpu.run_with_output(photo("face_21.jpg"))
    boxes = kpu.regionlayer_yolo2()
    assert len(boxes) == 1
    x, y, w, h, classid, prob = boxes[0]
    assert all(isinstance(v, int) for v in (x, y, w, h, classid)) and classid == 0 and 0.5 < prob <= 1.0
    assert x <= FACE_21_CENTRE[0] <= x + w and y <= FACE_21_CENTRE[1] <= y + h
    kpu.run_with_output(flat(320, 240, 128))
    assert kpu.regionlayer_yolo2() == []  # a list, never None
    assert current().kpu.log.calls[-1]["call"] == "KPU.regionlayer_yolo2"
    # The image size scales the boxes (img_w/img_h, letterbox-corrected): half size, half the box.
    kpu.init_yolo2(FACE_ANCHORS, anchor_num=9, img_w=160, img_h=120, threshold=0.5, nms_value=0.2)
    kpu.run_with_output(photo("face_21.jpg"))
    (hx, hy, hw, hh, _, _), = kpu.regionlayer_yolo2()
    assert abs(hx - x / 2) <= 1 and abs(hw - w / 2) <= 1 and abs(hy - y / 2) <= 1 and abs(hh - h / 2) <= 1


def test_init_yolo2_arguments(card):
    kpu = KPU()
    with pytest.raises(ValueError, match="^need input anchor$"):
        kpu.init_yolo2()
    with pytest.raises(TypeError, match="can't convert float to int"):
        kpu.init_yolo2(FACE_ANCHORS, anchor_num=9.0)
    kpu.init_yolo2(FACE_ANCHORS)
    assert kpu._yolo["threshold"] == 0.7 and kpu._yolo["nms_value"] == 0.4  # the C defaults
    assert (kpu._yolo["anchor_num"], kpu._yolo["classes"], kpu._yolo["layer_w"]) == (5, 1, 10)


def test_lp_recog_reads_the_plates_of_the_corpus(card, capsys):
    plates = SHARED_DIR / "scripts" / "canmv_examples" / "_data" / "camera" / "plates"
    truth = {"plate_0.png": "A12345", "plate_1.png": "B7K9D2", "plate_2.png": "N88G56"}
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"  # the demos' ``ads`` table: 24 letters, then digits
    ads = letters + "0123456789"
    kpu = KPU()
    with pytest.raises(OSError, match="^not find lp weight data, please load$"):
        kpu.lp_recog()
    folder = model("99-KPU", "licenseplate_recognization")
    detect, recog = KPU(), KPU()
    detect.load_kmodel(card.put("d.kmodel", folder / "lp_detect.kmodel"))
    detect.init_yolo2((8.30891522166988, 2.75630994889035, 5.18609903718768, 1.7863757404970702, 6.91480529053198,
                       3.825771881004435, 10.218567655549439, 3.507521155788969, 7.548422850533574, 2.5823859096744715),
                      anchor_num=5, img_w=320, img_h=240, net_w=320, net_h=240, layer_w=20, layer_h=15,
                      threshold=0.7, nms_value=0.3, classes=0)
    recog.load_kmodel(card.put("r.kmodel", folder / "lp_recog.kmodel"))
    recog.lp_recog_load_weight_data(card.put("lp_weight.bin", folder / "lp_weight.bin"))
    assert capsys.readouterr().out.endswith("weight_data_size: 1498500\r\n")
    matched = 0
    for name, text in truth.items():
        bmp = io.BytesIO()  # the firmware loads BMP and JPEG files, not PNG
        PIL.Image.open(plates / name).convert("RGB").save(bmp, "BMP")
        img = image.Image(card.put(name[:-4] + ".bmp", bmp.getvalue()))
        img.pix_to_ai()
        detect.run_with_output(img)
        (x, y, w, h, _, _), = detect.regionlayer_yolo2()
        crop = img.cut(x, y, w, h).resize(208, 64)
        crop.replace(vflip=0, hmirror=1)
        crop.pix_to_ai()
        recog.run_with_output(crop)
        heads = recog.lp_recog()
        assert [len(t) for t in heads] == [31, 24, 34, 34, 34, 34, 34]
        read = letters[int(np.argmax(heads[1]))] + "".join(ads[int(np.argmax(t))] for t in heads[2:])
        assert read[0] == text[0], (name, read)  # the letter is always read right
        matched += sum(a == b for a, b in zip(read, text))
    assert matched >= 12, matched  # of 18 characters on synthetic plates in a font the net never saw


def test_lp_recog_load_weight_data_arguments(card):
    kpu = KPU()
    with pytest.raises(TypeError):
        kpu.lp_recog_load_weight_data(0x600000)
    with pytest.raises(ValueError, match="^path error!$"):
        kpu.lp_recog_load_weight_data(0, 100)
    with pytest.raises(ValueError, match="^size error!$"):
        kpu.lp_recog_load_weight_data(0x600000, 0)
    with pytest.raises(ValueError, match="^path error!$"):
        kpu.lp_recog_load_weight_data(1.5)
    with pytest.raises(ValueError, match="^open file error"):
        kpu.lp_recog_load_weight_data("/sd/none.bin")


def test_released_deinit_and_print(card, capsys):
    kpu = KPU()
    assert repr(kpu) == "type        : kmodel (KPU) \nmodel_size  : 0\ninputs      : 0\noutputs     : 0\n"
    assert kpu.deinit() is False
    source = model("99-KPU", "mnist", "uint8_mnist_cnn_model.kmodel")  # V4: inputs/outputs from its header
    kpu.load_kmodel(card.put("m.kmodel", source))
    assert repr(kpu) == (f"type        : kmodel (KPU) \nmodel_size  : {source.stat().st_size}\n"
                         "inputs      : 1\noutputs     : 1\n")
    capsys.readouterr()
    assert kpu.deinit() is True
    assert capsys.readouterr().out == "free kpu model buf succeed\r\n"
    assert kpu.deinit() is False
    assert current().kpu.budget.used == {}


# ------------------------------------------------------------------------------------ feat/kpu API
def test_feat_load_checks_the_probed_size(card, capsys):
    kpu = KPU()
    kpu.load(card.put("KPU/f/face.kmodel", model("98-KPU_NEW", "yolo_face_detect", "face_detect_320x240.kmodel")))
    assert capsys.readouterr().out == ""  # no "model load succeed" on this build
    padded = model("98-KPU_NEW", "face_recognization", "feature_extraction.kmodel")
    path = card.put("fe.kmodel", padded)
    with pytest.raises(OSError, match="^Model in filesystem maybe damaged"):
        kpu.load(path)
    declared = probe.model_size(padded.read_bytes())
    kpu.load(path, size=declared)  # the advice the error gives works
    assert kpu.attr()["model"]["size"] == declared
    with pytest.raises(OSError, match="^Failed to read file from filesystem"):
        kpu.load(path, size=padded.stat().st_size + 10)
    card.put("junk.kmodel", b"\x07" * 512)
    with pytest.raises(OSError, match="^Failed to load model"):
        kpu.load("/sd/junk.kmodel")
    assert capsys.readouterr().out == "Probe model size failed, will skip size check.\n"


def test_feat_load_arguments_and_flash(card):
    kpu = KPU()
    with pytest.raises(ValueError, match="^Model offset error!$"):
        kpu.load(0)
    with pytest.raises(ValueError, match="^Load_kmodel need one parameter, path\\(string\\) or offset\\(int\\)$"):
        kpu.load(1.5)
    with pytest.raises(ValueError, match="^Model size error!$") as info:
        kpu.load(0x300000)  # erased flash: no size to probe
    assert "0x300000" in maixemu.advice(info.value)
    with pytest.raises(ValueError, match="^Model size error!"):
        kpu.load(card.put("x.kmodel", b"\x00" * 16), size=5 * 1024 * 1024)
    with pytest.raises(ValueError, match="^open file error, please check file path!"):
        kpu.load("/sd/missing.kmodel")
    padded = model("98-KPU_NEW", "face_recognization", "feature_extraction.kmodel")
    card.flash(0x300000, padded)
    kpu.load(0x300000)  # as face_recog.py does: the size comes from the headers, no length check
    attr = kpu.attr()
    assert attr["model"]["name"] == "flash:0x00300000"
    assert attr["model"]["size"] == probe.model_size(padded.read_bytes())
    assert attr["model"]["sha256"] == bytearray(hashlib.sha256(padded.read_bytes()[:attr["model"]["size"]]).digest())
    assert attr["shape"] == {"input": [3, 64, 64], "output": [0, 0, 0]}  # no conv + dequantize at the end


def test_feat_run_checks_the_image_size(card, capsys):
    kpu = KPU()
    with pytest.raises(OSError, match="^Please load kmodel before$"):
        kpu.run(flat(320, 256))
    kpu.load(card.put("y.kmodel", model("98-KPU_NEW", "yolo_face_detect", "yolo_face_detect.kmodel")))
    with pytest.raises(TypeError, match="^Can't convert int to Image$"):
        kpu.run(5)
    with pytest.raises(ValueError, match="^Image formart error, use pix_to_ai"):
        kpu.run(image.Image(size=(320, 256)))
    with pytest.raises(OSError) as err:
        kpu.run(flat(320, 240))
    assert err.value.errno == errno.ERANGE and str(err.value) == "[Errno 34] ERANGE"
    assert capsys.readouterr().out == "model input 256x320 but image is 240x320"  # no newline on the device
    with pytest.raises(OSError, match="^Please load/run kmodel before$"):
        kpu.get_outputs()
    kpu.run(flat(320, 256))
    out = kpu.get_outputs()
    assert len(out) == 54 * 8 * 10 and all(isinstance(v, float) for v in out)
    assert kpu.get_outputs("x") == out  # a non-int argument is ignored: output 0
    with pytest.raises(OSError, match="^Failed to get kpu outputs$"):
        kpu.get_outputs(1)


def test_feat_yolo2_takes_its_sizes_from_the_model(card):
    kpu = KPU()
    kpu.load(card.put("f.kmodel", model("98-KPU_NEW", "yolo_face_detect", "face_detect_320x240.kmodel")))
    yolo = kpu.Yolo2()
    with pytest.raises(OSError, match="^Please call init before run$"):
        yolo.run()
    with pytest.raises(ValueError, match="^The number of anchors should be a multiple of 2$"):
        yolo.init(FACE_ANCHORS[:3])
    yolo.init(FACE_ANCHORS)
    assert yolo.attr()["args"] == {"threshold": 0.5, "nms_value": 0.3, "anchor_num": 9,
                                   "anchor": [f32(a) for a in FACE_ANCHORS]}
    with pytest.raises(OSError, match="^Please load/run kmodel before$"):
        yolo.run()
    yolo.init(FACE_ANCHORS, 0.5, 0.2)
    kpu.run(photo("face_21.jpg"))
    (x, y, w, h, classid, prob), = yolo.run()  # 54 channels / 9 anchors - 5 = 1 class
    assert classid == 0 and prob > 0.5 and x <= FACE_21_CENTRE[0] <= x + w and y <= FACE_21_CENTRE[1] <= y + h
    assert kpu.attr()["child"]["Yolo2"] != 0 and current().kpu.log.calls[-1]["call"] == "KPU.Yolo2.run"
    kpu.run(flat(320, 240, 200))
    assert yolo.run() == []
    other = KPU()
    other.load(card.put("ld5.kmodel", model("98-KPU_NEW", "face_recognization", "ld5.kmodel")))
    other.run(flat(128, 128))
    decoder = other.Yolo2()
    decoder.init(FACE_ANCHORS)
    with pytest.raises(OSError, match="^Parse model for yolo run failed"):
        decoder.run()  # ends in fully connected layers: no output shape
    kpu.deinit()
    assert yolo.attr()["args"]["anchor_num"] == 0  # the parent's deinit clears its children
    with pytest.raises(OSError, match="^Please call init before run$"):
        yolo.run()


def test_feat_act_keeps_the_firmware_checks():
    kpu = KPU()
    assert kpu.Act.sigmoid(0.0) == 0.5 and kpu.Act.sigmoid(2.5) == f32(1 / (1 + np.exp(-2.5)))
    with pytest.raises(TypeError, match="^Can't convert int to float$"):
        kpu.Act.sigmoid(1)
    with pytest.raises(ValueError, match="^list minimum size is 2"):
        kpu.Act.softmax([1.0, 2.0])  # the size check is inverted in maix_kpu.c
    assert kpu.Act.softmax([]) == []


def test_feat_feat_calculate_and_compare(card):
    kpu = KPU()
    with pytest.raises(TypeError, match="^Can't convert list to KPU$"):
        kpu.Feat.calculate([1.0])
    with pytest.raises(OSError, match="^Please load/run kmodel before$"):
        kpu.Feat.calculate(kpu)
    kpu.load(card.put("mb.kmodel", model("98-KPU_NEW", "self_learn_classifier", "mb-0.25.kmodel")))
    kpu.run(flat(224, 224, 60))
    out = np.array(kpu.get_outputs())
    feature = kpu.Feat.calculate(kpu)
    assert len(feature) == 256 and feature == pytest.approx((out / np.linalg.norm(out)).tolist(), rel=1e-5, abs=1e-7)
    assert kpu.Feat.compare(feature, feature) == pytest.approx(100.0, abs=1e-3)
    assert kpu.Feat.compare([1.0, 0.0], [0.0, 1.0]) == 50.0
    with pytest.raises(ValueError, match="^feature len not equal$"):
        kpu.Feat.compare([0.0] * 300, [0.0] * 299)
    big = KPU()
    big.load(card.put("f.kmodel", model("98-KPU_NEW", "yolo_face_detect", "face_detect_320x240.kmodel")))
    big.run(flat(320, 240))
    with pytest.raises(ValueError, match="^feature length bigger than 256$"):
        big.Feat.calculate(big)


def test_feat_lpr(card):
    folder = model("98-KPU_NEW", "licenseplate_recognization")
    kpu = KPU()
    lpr = kpu.Lpr()
    with pytest.raises(OSError, match="^Please call init before run$"):
        lpr.run()
    with pytest.raises(ValueError, match="^offset error!$"):
        lpr.load(0, 100)
    with pytest.raises(TypeError, match="^Can't convert float to int$"):
        lpr.load(0x600000, 1.5)
    with pytest.raises(ValueError, match="^load\\(\"path\" / offset, size\\)$"):
        lpr.load(1.5)
    with pytest.raises(ValueError, match="^weight file size error$"):
        lpr.load(0x600000, 0)
    lpr.load(card.put("w.bin", folder / "lp_weight.bin"))
    assert lpr.attr()["weight"]["size"] == 1498500
    with pytest.raises(OSError, match="^Please load/run kmodel before$"):
        lpr.run()
    kpu.load(card.put("r.kmodel", folder / "lp_recog.kmodel"))
    kpu.run(flat(208, 64, 100))
    assert [len(t) for t in lpr.run()] == [31, 24, 34, 34, 34, 34, 34]
    card.flash(0x600000, folder / "lp_weight.bin")
    lpr.load(0x600000, 1498500)  # the flash variant the demo has commented out
    assert lpr.attr()["weight"]["name"] == "flash:0x00600000"


def test_feat_deinit_and_print(card):
    kpu = KPU()
    kpu.load(card.put("f.kmodel", model("98-KPU_NEW", "yolo_face_detect", "face_detect_320x240.kmodel")))
    text = repr(kpu)
    assert text.startswith("KPU (K210)\nself                  : 0x")
    assert "model_type            : KMODELV4\n" in text and "model_input(CHW)      : 3x240x320\n" in text
    assert "model_output(CHW)     : 54x8x10\n" in text and "model_output_count    : 1\n" in text
    assert kpu.deinit() is None
    assert repr(kpu).endswith("model_type            : (null)\n")
    with pytest.raises(OSError, match="^Please load kmodel before$"):
        kpu.run(flat(320, 240))
    assert current().kpu.budget.used == {}


def test_one_object_uses_one_firmware_api(card):
    kpu = KPU()
    kpu.load(card.put("f.kmodel", model("98-KPU_NEW", "yolo_face_detect", "face_detect_320x240.kmodel")))
    with pytest.raises(AttributeError, match="^'KPU' object has no attribute 'run_with_output'$") as info:
        kpu.run_with_output(flat(320, 240))
    assert "this KPU object was used with the feat/kpu CanMV firmware" in maixemu.advice(info.value)
    old = KPU()
    old.load_kmodel(card.put("g.kmodel", model("99-KPU", "yolo_face_detect", "face_detect_320x240.kmodel")))
    with pytest.raises(AttributeError, match="'KPU' object has no attribute 'Yolo2'"):
        old.Yolo2()
    assert KPU.sigmoid(0.0) == KPU.Act.sigmoid(0.0)  # the stateless helpers belong to neither object


def test_buffers_larger_than_the_boards_ram_fail_like_malloc(card):
    kpu = KPU()
    with pytest.raises(MemoryError, match="^model buffer memory allocation failed"):
        kpu.load_kmodel(0x300000, 64 * 1024 * 1024)
    with pytest.raises(MemoryError, match="^weight data buffer memory allocation failed"):
        kpu.lp_recog_load_weight_data(0x600000, 0x7FFFFFFF)
    with pytest.raises(MemoryError, match="^LPR weight buffer memory allocation failed"):
        KPU().Lpr().load(0x600000, 0x7FFFFFFF)
    big = card.sd / "big.kmodel"
    with open(big, "wb") as handle:  # sparse: 7 MiB on the card, nothing read into memory
        handle.truncate(7 * 1024 * 1024)
    with pytest.raises(MemoryError, match="^model buffer memory allocation failed"):
        kpu.load_kmodel("/sd/big.kmodel")
    with pytest.raises(ValueError, match="^Model size error!"):
        KPU().load("/sd/big.kmodel")  # the feat/kpu build stops at 5 MiB


def test_a_short_raw_input_is_noticed_once_on_the_board_console(card, capsys):
    """The KPU reads as many bytes as the model takes: a short buffer gives garbage on the board.
    The notice goes to the board console's stderr (a runner's capture sees it), once per run."""
    kpu = KPU()
    kpu.load_kmodel(card.put("ld5.kmodel", model("99-KPU", "face_attribute", "ld5.kmodel")))
    path = card.put("short.bin", bytes(100))
    capsys.readouterr()
    for _ in range(3):
        kpu.run_with_output(path, getlist=True)
    err = capsys.readouterr().err
    assert err.count("the input has 100 bytes, the model reads 49152") == 1, err
    assert err.startswith("[maixemu] ")


def test_features_of_different_lengths_are_noticed_once(card, capsys):
    kpu = KPU()
    capsys.readouterr()
    for _ in range(2):
        assert kpu.Feat.compare([1.0, 0.0, 0.0], [1.0, 0.0]) == 100.0
    assert capsys.readouterr().err.count("Feat.compare got features of 3 and 2 values") == 1
