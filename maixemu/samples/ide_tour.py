# A tour of the IDE page -- `maixemu run samples/ide_tour.py --ide` and open http://127.0.0.1:8210/
# (no webcam? add --camera synthetic, or --camera PHOTO.jpg). On the page:
#  * Frame buffer: each snapshot with what this script drew on it (the MaixPy IDE's view); LCD: what
#    lcd.display() showed. Drag an ROI on the frame buffer for its histogram and statistics.
#  * Threshold editor: move the LAB sliders until only your object is white, then paste the tuple
#    into RED below; the green boxes are find_blobs([RED]).
#  * Board: hold BOOT (its IRQ prints, the red LED follows it); clock.fps() next to the PC's frame
#    rate and the K210 time of this script's kpu.forward per frame.
import sensor, image, lcd, time
import KPU as kpu
from Maix import GPIO
from fpioa_manager import fm
from board import board_info

RED = (30, 100, 15, 127, 15, 127)  # LAB (L min, L max, A min, A max, B min, B max) for find_blobs

lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
task = kpu.load(0xF00000)  # maixemu's demo model (edge filters), pre-flashed there

fm.register(board_info.BOOT_KEY, fm.fpioa.GPIOHS0)
key = GPIO(GPIO.GPIOHS0, GPIO.IN, GPIO.PULL_UP)
fm.register(board_info.LED_R, fm.fpioa.GPIO0, force=True)
led = GPIO(GPIO.GPIO0, GPIO.OUT)
led.value(1)  # the LED is active low: off


def on_boot(pin):
    pressed = pin.value() == 0
    led.value(0 if pressed else 1)
    print("BOOT", "pressed" if pressed else "released")


key.irq(on_boot, GPIO.IRQ_BOTH)
print("ide_tour: hold BOOT, drag an ROI, move the threshold sliders")

clock = time.clock()
frames = 0
while True:
    clock.tick()
    img = sensor.snapshot()
    kpu.forward(task, img)
    for blob in img.find_blobs([RED], pixels_threshold=100, area_threshold=100):
        img.draw_rectangle(blob.rect(), color=(0, 255, 0), thickness=2)
        img.draw_cross(blob.cx(), blob.cy(), color=(0, 255, 0))
    lcd.display(img)
    fps = clock.fps()
    frames += 1
    if frames % 50 == 0:
        print("frame %d, %.1f fps" % (frames, fps))
