# Face detection with the legacy KPU API, the model in flash (as on a Maix board).
# Model: MaixPy's stock face detector (kmodel V3, 320x240 in). With ../shared next to this repo:
#   maixemu run samples/face_detect.py --flash-image ../shared/models/v3/face_model_at_0x300000.kfpkg
# or --flash 0x300000=face_detect_320x240.kmodel for a plain kmodel file.
import sensor, image, lcd, time
import KPU as kpu


def label(img, x, y, text, color, scale=1):
    """Text on a black band, so it reads on any picture underneath (draw_string has no background)."""
    img.draw_rectangle(x, y, int(8 * scale) * len(text) + 4, int(12 * scale) + 4, color=(0, 0, 0), fill=True)
    img.draw_string(x + 2, y + 2, text, color=color, scale=scale)


lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
sensor.run(1)

task = kpu.load(0x300000)
anchors = (1.889, 2.5245, 2.9465, 3.94056, 3.99987, 5.3658, 5.155437, 6.92275, 6.718375, 9.01025)
kpu.init_yolo2(task, 0.5, 0.3, 5, anchors)   # threshold, nms, anchor count, anchors
clock = time.clock()
while True:
    clock.tick()
    img = sensor.snapshot()
    faces = kpu.run_yolo2(task, img)         # None (not []) when there is no face
    if faces:
        for face in faces:
            img.draw_rectangle(face.rect(), color=(255, 0, 0), thickness=2)
            label(img, face.x(), max(face.y() - 16, 0), "%.2f" % face.value(), (255, 0, 0))
    label(img, 2, 2, "%.1f fps" % clock.fps(), (0, 255, 0), scale=2)
    lcd.display(img)
