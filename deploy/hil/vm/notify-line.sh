# SPDX-License-Identifier: BSD-2-Clause
# Run by socat once per sd_notify datagram (on stdin): appends "ms MSG MSG..." to notify.log,
# the datagram's lines joined by spaces, timed when it arrived.
. /hil/lib.sh
t=$(now_ms)
echo "$t $(tr '\n' ' ')" >> "$HIL_OUT/notify.log"
