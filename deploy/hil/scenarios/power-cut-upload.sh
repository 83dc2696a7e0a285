# SPDX-License-Identifier: BSD-2-Clause
# roots: bookworm
# power-cut-upload: the upload queue (shutterd --connector, rclone to a `local` remote on the
# card's own ext4 disk) through a power cut: QEMU killed 2 s after the VM saw 4 photos
# verified and a batch of 2 more under way, with the page cache's writeback held off so that
# only what was synced survives. The disk as the cut left it (a copy, its journal replayed by
# e2fsck -fy) is read with debugfs: its records and copies are printed (a record "verified"
# whose copy is short or empty is the bug a verified copy without a sync makes), not judged.
# The next boot lets the queue settle; then: e2fsck clean, every photo decodes, every photo
# verified, every verified record's copy under its final name has the card's size and sha256,
# and no file under a final name on the remote differs from the card.
# Only on bookworm: the image carries this machine's rclone (the other roots have none).
NAS_DIR=nas/garden
scenario_run() {
    hil_new_disk
    hil_boot 1 HIL-CUT 2 || return 1
    # The disk as the cut left it, as a mount would see it (on a copy: the next boot must find
    # it as it was): the journal replayed by e2fsck -fy, then the records and copies dumped.
    cp --sparse=always "$OUT/disk.img" "$OUT/cut.img"
    e2fsck -fy "$OUT/cut.img" > "$OUT/fsck-after-cut.log" 2>&1; echo "e2fsck rc=$?" >> "$OUT/fsck-after-cut.log"
    rm -rf "$OUT/cut"; mkdir -p "$OUT/cut"
    debugfs -R "rdump /.upload /DCIM /nas $OUT/cut" "$OUT/cut.img" > "$OUT/debugfs-cut.log" 2>&1
    rm -f "$OUT/cut.img"
    hil_boot 2 && hil_extract
}
# record_lines DIR: "KEY STATE FILE REMOTE BYTES" for each upload record under DIR/.upload
# ("KEY unreadable - - 0" for one a cut left empty or torn).
record_lines() {
    for r in "$1"/.upload/*.json; do
        [ -f "$r" ] || continue
        k=$(basename "$r" .json)
        l=$(jq -r '"\(.state) \(.file) \(.remote // "-") \(.bytes)"' "$r" 2>/dev/null)
        echo "$k ${l:-unreadable - - 0}"
    done
}
# copy_problem DIR FILE REMOTE: why the copy REMOTE (nas:/mnt/data/...) under DIR is not the
# card's FILE (DCIM/...) under DIR; nothing when it is, byte for byte.
copy_problem() {
    card="$1/$2"; copy="$1/${3#nas:/mnt/data/}"
    [ -f "$copy" ] || { echo "not there"; return; }
    cs=$(stat -c %s "$card"); rs=$(stat -c %s "$copy")
    [ "$rs" = "$cs" ] || { echo "$rs of $cs bytes"; return; }
    [ "$(sha256sum < "$copy")" = "$(sha256sum < "$card")" ] || echo "$rs bytes, sha256 differs"
}
# bad_copies DIR: "SHTR0001.JPG (0 of 41234 bytes)" for each verified record under DIR whose
# copy is not the card's file.
bad_copies() {
    record_lines "$1" | while read -r k state file remote bytes; do
        [ "$state" = verified ] || continue
        p=$(copy_problem "$1" "$file" "$remote")
        [ -z "$p" ] || printf '%s (%s) ' "$(basename "$file")" "$p"
    done
}
# verified_count DIR: records under DIR that say verified.
verified_count() { record_lines "$1" | awk '$2 == "verified"' | wc -l; }
# stray_finals DIR: files under final names on the remote (not .shutter-incoming) that are not
# the card's file they stand for: the one a record names, else the card file of that name
# ("SHTR0001-2.JPG" stands for SHTR0001.JPG) in the card folder of the same name.
stray_finals() {
    ( cd "$1/$NAS_DIR" 2>/dev/null && find . -path ./.shutter-incoming -prune -o -type f -print ) | sed 's|^\./||' |
    while read -r f; do
        remote="nas:/mnt/data/$NAS_DIR/$f"
        file=$(record_lines "$1" | awk -v r="$remote" '$4 == r { print $3; exit }')
        if [ -z "$file" ]; then
            file="DCIM/$(dirname "$f")/$(basename "$f" | sed 's/-[0-9]*\(\.[A-Za-z0-9]*\)$/\1/')"
            [ -f "$1/$file" ] || { printf '%s (no such card file) ' "$f"; continue; }
        fi
        p=$(copy_problem "$1" "$file" "$remote")
        [ -z "$p" ] || printf '%s (%s) ' "$f" "$p"
    done
}
scenario_check() {
    d2=$(vm_file stage2)
    serial=$(tr -d '\r' < "$OUT/serial-1.log")
    cutline=$(echo "$serial" | grep '^HIL-CUT ' | tail -1)
    [ -n "$cutline" ] || { echo "stage 1 never reached the cut (see serial-1.log)"; return 1; }
    vm_sane "$d2" || return 1
    cutfsck=$(sed -n 's/^e2fsck rc=//p' "$OUT/fsck-after-cut.log")
    [ "${cutfsck:-9}" -le 1 ] || { echo "e2fsck of the disk as cut: rc $cutfsck (see fsck-after-cut.log)"; return 1; }
    grep -q '^e2fsck rc=0' "$OUT/fsck.log" || { echo "e2fsck after the second boot is not clean (see fsck.log)"; return 1; }

    # Before the cut, as the VM saw it; then the disk as the cut left it.
    said=$(echo "$cutline" | sed -n 's/.* verified=\([0-9]*\).*/\1/p')
    batch=$(echo "$cutline" | sed -n 's/.* batch=\([a-z]*\).*/\1/p')
    logged=$(echo "$serial" | grep -c '^CONNECTOR| .*uploaded DCIM/')
    cutv=$(verified_count "$OUT/cut")
    cutbad=$(bad_copies "$OUT/cut")
    nbad=$(echo "$cutbad" | grep -o 'SHTR[0-9]*\.[A-Z0-9]* (' | wc -l)
    # After the reboot: which files were uploaded again, of those the cut left verified.
    again=$(sed -n 's/.*uploaded DCIM\/[^/]*\/\([^ ]*\) to .*/\1/p' "$d2/connector.log" 2>/dev/null | sort -u)
    resent=0
    for f in $(echo "$cutbad" | grep -o 'SHTR[0-9]*\.[A-Z0-9]*'); do
        echo "$again" | grep -qx "$f" && resent=$((resent + 1))
    done
    figures="before the cut $said verified (status; $logged 'uploaded' lines on the console), a batch under way: $batch; on the disk as cut: $cutv records verified, $nbad of them wrong${cutbad:+: $cutbad}(e2fsck -fy rc $cutfsck); after the reboot $(echo "$again" | grep -c SHTR) uploaded, $resent of the wrong ones re-sent"
    echo "power-cut-upload figures: $figures" >> "$OUT/host.log"

    # The end state, after the second boot settled.
    bad=$(bad_copies "$OUT/disk")
    [ -z "$bad" ] || { echo "verified records whose copy on the remote is not the card's file after the second boot: $bad[$figures]"; return 1; }
    j=$(files JPG)
    n=$(echo "$j" | grep -c JPG)
    [ "$n" -ge 6 ] || { echo "$n photos on the card, expected 6 [$figures]"; return 1; }
    for f in $j; do decodes "$f" || { echo "$(basename "$f") does not decode [$figures]"; return 1; }; done
    unverified=""
    for f in $(files JPG) $(files MP4); do
        rel=DCIM/$(basename "$(dirname "$f")")/$(basename "$f")
        set -- $(record_lines "$OUT/disk" | awk -v f="$rel" '$3 == f { print $2, $5; exit }')
        [ "${1:-}" = verified ] && [ "${2:-}" = "$(stat -c %s "$f")" ] || unverified="$unverified$(basename "$f") (${1:-no record}) "
    done
    [ -z "$unverified" ] || { echo "not verified after the second boot: $unverified[$figures]"; return 1; }
    stray=$(stray_finals "$OUT/disk")
    [ -z "$stray" ] || { echo "under final names on the remote and not the card's file: $stray[$figures]"; return 1; }
    settled=$(grep -h '^HIL-SETTLED' "$OUT/serial-2.log" | tr -d '\r' | sed -n 's/.*after_ms=\([0-9]*\).*/\1/p')
    echo "$figures; all $n photos verified ${settled:+$((settled / 1000)) s }after the restart, every copy whole (size, sha256), nothing else under a final name; e2fsck clean after reboot"
}
