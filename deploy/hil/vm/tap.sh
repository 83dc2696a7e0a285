# tap: a 200 ms press once the service is READY -> one JPEG; times the edge -> file.
. /hil/lib.sh
# What the camera itself reports per frame (the EXIF check depends on it).
cam -c 1 --capture=2 --metadata > "$HIL_OUT/cam-metadata.txt" 2>&1
led_sampler_start
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
t=$(now_ms); press; usleep 200000; release
wait_media_count JPG 1 60 && echo "edge_to_jpeg_ms $(( HIL_T - t ))" >> "$HIL_OUT/timing.txt"
sleep 3
shutterd_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
