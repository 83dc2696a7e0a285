# SPDX-License-Identifier: BSD-2-Clause
# bounce: a press whose contact bounces (edges 1-3 ms apart) on the way down and up -> one
# gesture, so exactly one JPEG and no clip; then a clean tap on a starved CPU -> one JPEG.
# hil-pull does the timing and logs the real edges; when the emulated CPU stalls and a gap grows past 18 ms (no longer a bounce for a 20 ms
# filter), the attempt does not count and is tried again, up to 5 times.
. /hil/lib.sh
idle() { shutterctl status 2>/dev/null | grep -q '"state" : "idle"'; }
led_sampler_start
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
for i in 1 2 3 4 5; do
    before=$(media JPG | wc -l)
    clips_before=$(media MP4 | wc -l)
    echo "$(now_ms) press" >> "$HIL_OUT/button.log"
    hil-pull "$HIL_GPIO/sim_gpio17/pull" \
        down 1 up 2 down 1 up 3 down 250 up 2 down 1 up 3 down 1 up > "$HIL_OUT/edges-$i.txt"
    echo "$(now_ms) release" >> "$HIL_OUT/button.log"
    wait_media_count JPG $((before + 1)) 60
    sleep 4    # a second, wrong photo would have landed by now
    # Whatever this attempt made is on the card before the next one is counted (a clip a
    # stalled emulator made of it finalises after its release).
    wait_for 60 idle || echo "not idle 60 s after attempt $i"
    after=$(media JPG | wc -l)
    # The widest gap but the 250 ms hold (the 5th, ending at edge 6): a gap the emulator
    # stretched past 100 ms counts too (it makes two presses, not a bounce).
    worst=$(awk 'NR > 1 && NR != 6 && $1 - p > w {w = $1 - p} {p = $1} END {printf "%.1f", w}' "$HIL_OUT/edges-$i.txt")
    echo "$i $before $after $worst $clips_before $(media MP4 | wc -l)" >> "$HIL_OUT/attempts.txt"
    awk -v w="$worst" 'BEGIN{exit !(w < 18)}' && break
done
# A starved tap: a clean 250 ms press while the CPU that saw it is busy (hil-pull spins at
# real-time priority 10 on it), so work the kernel defers to an ordinary worker runs only
# after the release. The kernel's debounce is such work: while the service asked for it the
# press was lost (no edge at all). The edge interrupt's thread (priority 50) outranks the
# spinner on a preemptible kernel.
before=$(media JPG | wc -l); clips_before=$(media MP4 | wc -l)
hil-pull "$HIL_GPIO/sim_gpio17/pull" fifo down 250 up > "$HIL_OUT/edges-starved.txt"
wait_media_count JPG $((before + 1)) 60
sleep 4
wait_for 60 idle || echo "not idle 60 s after the starved tap"
echo "$before $(media JPG | wc -l) $clips_before $(media MP4 | wc -l)" > "$HIL_OUT/starved.txt"
shutterd_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
