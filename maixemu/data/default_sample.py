# camera -> KPU -> LCD with maixemu's own edge-filter model: the camera and 3 feature maps.
# What `maixemu run` runs with no script. The model (edge_filters.kmodel, next to this file) is one K210
# conv layer with fixed 3x3 filters; see maixemu/tools/make_sample_model.py. It is an ordinary MaixPy
# script: copy it and edge_filters.kmodel to a board's SD card to run it there.
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
        label(canvas, (ch % 2) * 160 + 2, (ch // 2) * 120 + 2, names[ch], (255, 255, 0))
    label(canvas, 2, 222, "%.1f fps" % clock.fps(), (0, 255, 0))
    lcd.display(canvas)
