# SPDX-License-Identifier: BSD-2-Clause
# overlay_layer WHO DIR LOWER STEPS: builds (or keeps) one overlay layer of a cached root,
# shared by deploy/peer/build-root.sh and deploy/hil/build-arm64-root.sh (sourced, POSIX sh).
# DIR/upper is the overlayfs upper directory on LOWER (an overlay lowerdir string, top layer
# first); STEPS is shell run as root, `sh -eu`, with $m the merged root, $E the clean
# environment for chroot, `in_root CMD...` (chroot "$m" $E CMD) and `bounded SECONDS WHAT
# CMD...` (a timeout that names the step: qemu-user can hang); what STEPS needs besides comes
# through exported variables. Mounts live in a private mount namespace only. The log is
# DIR.log; DIR/.complete marks a finished layer (a later call returns at once) and
# DIR/.build-seconds its time. WHO prefixes the messages; a failure prints the log's tail
# and exits. The callers hold their cache's lock.
overlay_layer() {
    ol_who=$1; ol_dir=$2; ol_lower=$3; ol_steps=$4
    [ -f "$ol_dir/.complete" ] && return 0
    if grep -q " $ol_dir/" /proc/self/mountinfo; then
        echo "$ol_who: FAIL something is mounted under $ol_dir: unmount it first" >&2; exit 1
    fi
    rm -rf "$ol_dir"; mkdir -p "$ol_dir/upper" "$ol_dir/work" "$ol_dir/m"
    ol_log=$ol_dir.log
    ol_start=$(date +%s)
    echo "$ol_who: building $(basename "$ol_dir") (log $ol_log)" >&2
    ol_rc=0
    unshare --mount --propagation private sh -eu -s "$ol_who" "$ol_dir" "$ol_lower" "$ol_steps" \
        > "$ol_log" 2>&1 <<'INNER' || ol_rc=$?
who=$1; dir=$2; lower=$3; steps=$4
m=$dir/m
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$dir/upper,workdir=$dir/work" "$m"
mount --bind /proc "$m/proc"
mount --bind /dev "$m/dev"
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
bounded() { # bounded SECONDS WHAT COMMAND...: names the step when it hangs
    secs=$1; what=$2; shift 2
    rc=0; timeout --kill-after=30 "$secs" "$@" || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "$who: TIMEOUT after $secs s: $what" >&2; fi
    return "$rc"
}
# shellcheck disable=SC2086
in_root() { chroot "$m" $E "$@"; }
eval "$steps"
INNER
    if [ "$ol_rc" != 0 ]; then
        tail -25 "$ol_log" >&2
        echo "$ol_who: FAIL building $(basename "$ol_dir") (log $ol_log)" >&2; exit 1
    fi
    rmdir "$ol_dir/m" 2>/dev/null || true
    echo "$(( $(date +%s) - ol_start ))" > "$ol_dir/.build-seconds"
    touch "$ol_dir/.complete"
    echo "$ol_who: $(basename "$ol_dir") built in $(cat "$ol_dir/.build-seconds") s" >&2
}
