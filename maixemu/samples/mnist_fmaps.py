# MNIST digits from the camera, with set_layers() + kpu.fmap() feature maps.
# Model: kmodel V3 MNIST (28x28 grayscale in). Hold a digit written dark on light paper in front of the camera.
#   maixemu run samples/mnist_fmaps.py --flash 0x300000=../shared/models/v3/mnist.kmodel
#
# MNIST was trained on light digits on a black background, size-normalised to a 20x20 box in the middle
# of 28x28. A camera sees something else: gray paper, uneven light, a digit anywhere and of any size.
# resize(28, 28) + invert() alone leaves the paper dark gray instead of black and the digit small or off
# centre, and the model then reads most digits as 0, 6 or 9. So, as on the board: find the ink (Otsu
# threshold + find_blobs), cut a square around it, then invert() and strech_char() (the firmware's
# contrast stretch for characters: paper -> black, ink -> white).
import sensor, image, lcd
import KPU as kpu

lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
sensor.set_windowing((224, 224))


def find_digit(img):
    """The square around the darkest ink in a grayscale image, with MNIST's margin, or None."""
    ink = img.get_histogram().get_threshold().value()   # Otsu: ink below, paper above
    blobs = img.find_blobs([(0, ink)], pixels_threshold=40, merge=True, margin=12)
    if not blobs:
        return None
    b = max(blobs, key=lambda b: b.pixels())
    if b.w() * b.h() > img.width() * img.height() * 3 // 4:
        return None                         # "ink" everywhere: blank paper (noise) or no paper
    side = min(max(b.w(), b.h()) * 28 // 20, img.width(), img.height())   # digit = 20 of 28 pixels
    x = min(max(b.cx() - side // 2, 0), img.width() - side)
    y = min(max(b.cy() - side // 2, 0), img.height() - side)
    return (x, y, side, side)


task = kpu.load(0x300000)
screen = image.Image().to_grayscale()
while True:
    img = sensor.snapshot().to_grayscale()
    screen.clear()                          # a fresh screen every frame: no text over old text
    box = find_digit(img)
    if box is None:
        screen.draw_string(64, 4, "no digit", scale=2)
    else:
        digit = img.copy(roi=box).resize(28, 28)
        digit.invert()                      # MNIST wants a light digit on black
        digit.strech_char(1)                # paper -> 0, ink -> 255, darker corners
        digit.pix_to_ai()                   # copy()/resize() made a new image without AI memory
        kpu.set_layers(task, 1)             # stop after the first conv: 16 maps of 14x14, raw uint8
        fmap = kpu.forward(task, digit)
        for ch in range(16):
            screen.draw_image(kpu.fmap(fmap, ch).resize(28, 28), (ch % 8) * 30, 60 + (ch // 8) * 30)
        kpu.set_layers(task, 0)             # all layers again: 10 softmax probabilities
        probs = kpu.forward(task, digit)[:]
        best = probs.index(max(probs))
        screen.draw_image(digit.resize(56, 56), 0, 0)
        screen.draw_string(64, 4, "digit %d" % best, scale=2)
        screen.draw_string(64, 30, "p=%.2f" % probs[best], scale=2)
        img.draw_rectangle(box, color=0, thickness=2)
    screen.draw_image(img.resize(80, 80), 240, 0)   # the camera, with the square the model read
    lcd.display(screen)
