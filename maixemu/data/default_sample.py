# maixemu's bundled sample: camera -> KPU -> LCD, with maixemu's own model (edge_filters.kmodel,
# one K210 conv layer with fixed 3x3 filters; see maixemu/tools/make_sample_model.py).
# It is an ordinary MaixPy script: copy it and edge_filters.kmodel to a board's SD card to run it there.
import sensor, image, lcd, time
import KPU as kpu

lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
sensor.skip_frames(time=200)

task = kpu.load("edge_filters.kmodel")  # relative to the working directory, /sd
names = ("camera", "edges x", "edges y", "lines")
canvas = image.Image(size=(320, 240))
clock = time.clock()

while True:
    clock.tick()
    img = sensor.snapshot()             # fills the pixels AND the AI buffer the KPU reads
    fmap = kpu.forward(task, img)       # 4 feature maps of 160x120, raw uint8
    canvas.draw_image(img.resize(160, 120), 0, 0)
    for ch in (1, 2, 3):
        tile = kpu.fmap(fmap, ch).to_rgb565(copy=True)  # draw_image copies raw values: convert gray first
        canvas.draw_image(tile, (ch % 2) * 160, (ch // 2) * 120)
    for ch in range(4):
        canvas.draw_string((ch % 2) * 160 + 4, (ch // 2) * 120 + 4, names[ch], color=(255, 255, 0))
    canvas.draw_string(4, 224, "%.1f fps" % clock.fps(), color=(0, 255, 0))
    lcd.display(canvas)
