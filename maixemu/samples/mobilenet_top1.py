# ImageNet top-1 with MobileNet v1 (kmodel V3, 224x224 in), the labels on the SD card.
# The model is 2.6 MB: more than MaixPy's full firmware leaves (ERR_NO_MEM), so run as on a minimum build:
#   maixemu run samples/mobilenet_top1.py --firmware minimum \
#       --flash 0x200000=../shared/models/v3/mobilenet_v1_0.75_1000class.kmodel \
#       --sd ../shared/models/v3          (labels: mobilenet_v1_labels.txt there)
import sensor, image, lcd
import KPU as kpu


def label(img, x, y, text, color, scale=1):
    """Text on a black band, so it reads on any picture underneath (draw_string has no background)."""
    img.draw_rectangle(x, y, int(8 * scale) * len(text) + 4, int(12 * scale) + 4, color=(0, 0, 0), fill=True)
    img.draw_string(x + 2, y + 2, text, color=color, scale=scale)


lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
sensor.set_windowing((224, 224))        # on OV2640 boards: the top-left 224x224 of the frame

with open("mobilenet_v1_labels.txt") as f:
    labels = [line.strip() for line in f]
task = kpu.load(0x200000)
while True:
    img = sensor.snapshot()             # 224x224 with AI memory: ready for the KPU
    scores = kpu.forward(task, img)[:]
    best = scores.index(max(scores))
    label(img, 2, 2, "%.2f %s" % (scores[best], labels[best][:24]), (255, 255, 0), scale=1.5)
    lcd.display(img)
