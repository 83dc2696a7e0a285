# hold: the loopback tone plays while the button is held ~3 s -> one MP4 (H.264 + AAC).
. /hil/lib.sh
led_sampler_start
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
tone_start
sleep 2
press; sleep 3; release
wait_media_count MP4 1 60
sleep 3
shutterd_stop
tone_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
