# SPDX-License-Identifier: BSD-2-Clause
# power-on-press: the button held before shutterd starts and let go once the service saw it:
# one photo (no clip), taken at the first frame rather than refused as "not ready"; printed:
# the time from the kernel's start to that photo on the card (durable: its final name comes
# after the fsync), with the service's start and READY beside it.
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    grep -q "held as the service starts" "$d/shutterd.log" \
        || { echo "the service did not see the button held at its start (see $d/shutterd.log)"; return 1; }
    n=$(files JPG | wc -l)
    [ "$n" = 1 ] || { echo "$n JPEGs for a press held at power-on, expected 1 (see $d/shutterd.log)"; return 1; }
    [ "$(files MP4 | wc -l)" = 0 ] || { echo "the press held at power-on also made a clip"; return 1; }
    decodes "$(files JPG)" || { echo "$(basename "$(files JPG)") does not decode"; return 1; }
    ! grep -q "not ready" "$d/shutterd.log" || { echo "the press was refused as not ready (see $d/shutterd.log)"; return 1; }
    set -- $(cat "$d/timing.txt"); start=$2; durable=$6
    [ "$durable" != none ] || { echo "no durable photo"; return 1; }
    ready=$(awk '/READY=1/ {print $1; exit}' "$d/notify.log")
    echo "kernel start to the durable photo of a press held at power-on: ${durable} ms (service started at ${start} ms, READY at ${ready:-?} ms; under TCG emulation)"
}
