# SPDX-License-Identifier: BSD-2-Clause
# flash: flash.mode "on" -> the flash line goes high around the still.
. /hil/lib.sh
HIL_CONFIG='"flash": { "mode": "on" }'
led_sampler_start
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
press; usleep 200000; release
wait_media_count JPG 1 60 && echo "$HIL_T jpeg" >> "$HIL_OUT/button.log"
sleep 3
shutterd_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
