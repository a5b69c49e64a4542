# MNIST digits with the CanMV class API (`from maix import KPU`), the model on the SD card.
#   maixemu run samples/classifier_class_api.py --sd ../shared/models/v3     (mnist.kmodel there)
# Hold a digit written dark on light paper in front of the camera. The preprocessing (find the ink, cut a
# square around it, invert, strech_char) is explained in mnist_fmaps.py.
import sensor, image, lcd
from maix import KPU

lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.GRAYSCALE)
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


kpu = KPU()
kpu.load_kmodel("/sd/mnist.kmodel")
while True:
    img = sensor.snapshot()
    box = find_digit(img)
    if box is None:
        text = "no digit"
    else:
        digit = img.copy(roi=box).resize(28, 28)
        digit.invert()                          # MNIST wants a light digit on black
        digit.strech_char(1)                    # paper -> 0, ink -> 255
        digit.pix_to_ai()                       # the class API raises OSError without it
        probs = kpu.run_with_output(digit, getlist=True)
        best = probs.index(max(probs))
        text = "digit %d (%.2f)" % (best, probs[best])
        img.draw_rectangle(box, color=0, thickness=2)
    img.draw_rectangle(0, 0, img.width(), 28, color=0, fill=True)   # a dark band: the text reads on any paper
    img.draw_string(4, 4, text, color=255, scale=2)
    lcd.display(img)
