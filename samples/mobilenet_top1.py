# MobileNet v1 (ImageNet, 1000 classes, kmodel V3, 224x224 in) with labels from the SD card.
# The model is 2.6 MB: more than MaixPy's full firmware leaves (ERR_NO_MEM), so run as on a minimum build:
#   maixemu run samples/mobilenet_top1.py --firmware minimum \
#       --flash 0x200000=../shared/models/v3/mobilenet_v1_0.75_1000class.kmodel \
#       --sd ../shared/models/v3          (labels: mobilenet_v1_labels.txt there)
import sensor, image, lcd
import KPU as kpu

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
    img.draw_string(2, 2, "%.2f %s" % (scores[best], labels[best][:24]), color=(255, 255, 0), scale=1.5)
    lcd.display(img)
