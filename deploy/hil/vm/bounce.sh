# bounce: a press whose contact bounces (edges 1-3 ms apart) on the way down and up -> one
# gesture, so exactly one JPEG and no clip.
. /hil/lib.sh
g=$HIL_GPIO/sim_gpio17/pull
led_sampler_start
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
echo "$(now_ms) bounce-down" >> "$HIL_OUT/button.log"
echo pull-down > $g; usleep 1000; echo pull-up > $g; usleep 2000
echo pull-down > $g; usleep 1000; echo pull-up > $g; usleep 3000
echo pull-down > $g
usleep 250000
echo "$(now_ms) bounce-up" >> "$HIL_OUT/button.log"
echo pull-up > $g; usleep 2000; echo pull-down > $g; usleep 1000
echo pull-up > $g; usleep 3000; echo pull-down > $g; usleep 1000
echo pull-up > $g
wait_media_count JPG 1 60
sleep 5
shutterd_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
