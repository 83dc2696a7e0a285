# bounce: a press whose contact bounces (edges 1-3 ms apart) on the way down and up -> one
# gesture, so exactly one JPEG and no clip. hil-pull does the timing and logs the real edges.
. /hil/lib.sh
led_sampler_start
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
echo "$(now_ms) press" >> "$HIL_OUT/button.log"
hil-pull "$HIL_GPIO/sim_gpio17/pull" \
    down 1 up 2 down 1 up 3 down 250 up 2 down 1 up 3 down 1 up > "$HIL_OUT/edges.txt"
echo "$(now_ms) release" >> "$HIL_OUT/button.log"
wait_media_count JPG 1 60
sleep 5
shutterd_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
