# MNIST with feature maps: set_layers() stops the model early, kpu.fmap() shows one channel.
# Model: kmodel V3 MNIST (28x28 grayscale in). Hold a digit (dark on white) in front of the camera.
#   maixemu run samples/mnist_fmaps.py --flash 0x300000=../shared/models/v3/mnist.kmodel
import sensor, image, lcd
import KPU as kpu

lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
sensor.set_windowing((224, 224))

task = kpu.load(0x300000)
screen = image.Image().to_grayscale()
while True:
    img = sensor.snapshot().to_grayscale()
    digit = img.resize(28, 28)
    digit.invert()                      # MNIST wants a light digit on black
    digit.pix_to_ai()                   # resize() made a new image without AI memory
    kpu.set_layers(task, 1)             # stop after the first conv: 16 maps of 14x14, raw uint8
    fmap = kpu.forward(task, digit)
    for ch in range(16):
        screen.draw_image(kpu.fmap(fmap, ch).resize(28, 28), (ch % 8) * 30, 60 + (ch // 8) * 30)
    kpu.set_layers(task, 0)             # all layers again: 10 softmax probabilities
    probs = kpu.forward(task, digit)[:]
    best = probs.index(max(probs))
    screen.draw_image(digit.resize(56, 56), 0, 0)
    screen.draw_string(70, 10, "digit %d  p=%.2f" % (best, probs[best]), scale=2)
    lcd.display(screen)
