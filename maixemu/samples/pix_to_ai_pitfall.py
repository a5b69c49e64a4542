# The pix_to_ai() pitfall: what the KPU sees without and with pix_to_ai(), side by side.
# Runs as is: `maixemu run samples/pix_to_ai_pitfall.py` (maixemu pre-flashes its own demo model,
# edge_filters.kmodel, at 0xF00000).
#
# A K210 image has two buffers: RGB565 pixels (what drawing changes and the LCD shows) and a separate
# planar RGB888 "AI memory" (the only thing the KPU reads). sensor.snapshot() fills both;
# image.Image(path), resize(), cut(), copy() and drawing touch only the pixels.
# Run with `--ai-memory warn` to have maixemu point at the line where the KPU reads stale AI memory.
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

task = kpu.load(0xF00000)        # 3x320x240 in -> 4 feature maps of 160x120 (ch 3 = "lines")
stale = image.Image(size=(320, 240))
stale.pix_to_ai()                # AI memory filled ONCE, from a black canvas, and never again
fresh = image.Image(size=(320, 240))
screen = image.Image(size=(320, 240))

# 1. No AI memory at all: resize() makes a new image without it (the device raises, so do we).
small = sensor.snapshot().resize(160, 120)
try:
    kpu.forward(task, small)
except ValueError as e:
    print("resize() result has no AI memory:", repr(e))

while True:
    img = sensor.snapshot()
    stale.draw_image(img, 0, 0)              # the pixels change, the AI memory does not
    wrong = kpu.forward(task, stale)         # WRONG: the KPU still sees the black canvas
    screen.draw_image(kpu.fmap(wrong, 3).to_rgb565(copy=True), 0, 120)
    fresh.draw_image(img, 0, 0)
    fresh.pix_to_ai()                        # RIGHT: refresh the AI memory from the pixels
    right = kpu.forward(task, fresh)
    screen.draw_image(kpu.fmap(right, 3).to_rgb565(copy=True), 160, 120)
    screen.draw_image(img.resize(160, 120), 0, 0)
    label(screen, 162, 2, "camera (top left)", (255, 255, 0))
    label(screen, 2, 122, "without pix_to_ai", (255, 0, 0))
    label(screen, 162, 122, "with pix_to_ai", (0, 255, 0))
    lcd.display(screen)
