# Face detection with the legacy KPU API and a model in flash, as on a Maix board.
# Model: MaixPy's stock face detector (kmodel V3, 320x240 in). With ../shared next to this repo:
#   maixemu run samples/face_detect.py --flash-image ../shared/models/v3/face_model_at_0x300000.kfpkg
# or --flash 0x300000=face_detect_320x240.kmodel for a plain kmodel file.
import sensor, image, lcd, time
import KPU as kpu

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
            img.draw_string(face.x(), face.y() - 14, "%.2f" % face.value(), color=(255, 0, 0))
    img.draw_string(4, 4, "%.1f fps" % clock.fps(), color=(0, 255, 0), scale=2)
    lcd.display(img)
