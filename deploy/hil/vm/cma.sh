# SPDX-License-Identifier: BSD-2-Clause
# cma (libcamera 0.7.1): the press moment on Virtual0 when the still stream's buffers cannot
# be allocated (the host limits udmabuf to 16 MB a buffer and hides the DMA heap): status
# and log after the start, one 200 ms press, status after it.
. /hil/lib.sh
ls -la /dev/dma_heap /dev/udmabuf > "$HIL_OUT/devices.txt" 2>&1
cat /sys/module/udmabuf/parameters/size_limit_mb >> "$HIL_OUT/devices.txt" 2>&1
HIL_CONFIG='"camera": { "model": "imx708-virtual" }, "video": { "width": 1920, "height": 1080, "fps": 10 }, "still": { "moment": "press" }, "audio": { "enabled": false }'
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
shutterctl status > "$HIL_OUT/status-before.json" 2>&1
press; usleep 200000; release
wait_media_count JPG 1 60
sleep 2
shutterctl status > "$HIL_OUT/status-after.json" 2>&1
shutterd_stop
