# SPDX-License-Identifier: BSD-2-Clause
# no-camera: vimc is unbound before the service starts -> it stays up and shows the
# no-camera LED code; once vimc is bound again it becomes ready and takes a photo.
. /hil/lib.sh
echo vimc.0 > /sys/bus/platform/drivers/vimc/unbind
udevadm settle --timeout=10
led_sampler_start
shutterd_start
sleep 20    # a slow start (the 0.7.1 root under load) still leaves several code groups
echo "$(now_ms) bind" >> "$HIL_OUT/button.log"
kill -0 "$HIL_SHUTTERD" 2>/dev/null && echo alive > "$HIL_OUT/alive-without-camera"
echo vimc.0 > /sys/bus/platform/drivers/vimc/bind
udevadm settle --timeout=10
wait_ready 120 || echo "not READY 120 s after the bind"
# The service may need a moment after READY for its restart backoff: try a few taps.
for i in 1 2 3; do
    press; usleep 200000; release
    wait_media_count JPG 1 20 && break
done
sleep 2
shutterd_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
