# The newer class API (CanMV firmware: `from maix import KPU`) on the MNIST model.
#   maixemu run samples/classifier_class_api.py --sd ../shared/models/v3     (mnist.kmodel there)
import sensor, image, lcd
from maix import KPU

lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.GRAYSCALE)
sensor.set_framesize(sensor.QVGA)
sensor.set_windowing((224, 224))

kpu = KPU()
kpu.load_kmodel("/sd/mnist.kmodel")
while True:
    img = sensor.snapshot()
    digit = img.resize(28, 28)
    digit.invert()
    digit.pix_to_ai()                           # the class API raises OSError without it
    probs = kpu.run_with_output(digit, getlist=True)
    best = probs.index(max(probs))
    img.draw_string(4, 4, "digit %d (%.2f)" % (best, probs[best]), scale=2)
    lcd.display(img)
