# 20-class VOC detection (tiny YOLOv2, kmodel V3, 320x240 in): boxes and class names.
#   maixemu run samples/yolo_20class.py --flash 0x500000=../shared/models/v3/yolo_20class.kmodel
import sensor, image, lcd
import KPU as kpu


def label(img, x, y, text, color, scale=1):
    """Text on a black band, so it reads on any picture underneath (draw_string has no background)."""
    img.draw_rectangle(x, y, int(8 * scale) * len(text) + 4, int(12 * scale) + 4, color=(0, 0, 0), fill=True)
    img.draw_string(x + 2, y + 2, text, color=color, scale=scale)


classes = ("aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
           "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa",
           "train", "tvmonitor")
anchors = (1.08, 1.19, 3.42, 4.41, 6.63, 11.38, 9.42, 5.11, 16.62, 10.52)

lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)

task = kpu.load(0x500000)
kpu.init_yolo2(task, 0.5, 0.3, 5, anchors)
while True:
    img = sensor.snapshot()
    found = kpu.run_yolo2(task, img)
    if found:
        for obj in found:
            img.draw_rectangle(obj.rect(), color=(0, 255, 0))
            label(img, obj.x(), obj.y(), "%s %.2f" % (classes[obj.classid()], obj.value()), (0, 255, 0))
    lcd.display(img)
