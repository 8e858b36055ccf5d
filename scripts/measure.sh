# Sourced by the scripts that time whole commands (scale, log-rebuild):
# GNU time, installed from Debian's packages when it is missing, and
# `measure LABEL COMMAND...`, which runs COMMAND under it, keeps its output
# in "$work/LABEL.out" (the sourcing script sets `work`) and its seconds and
# KiB in "$work/LABEL.time", and prints its
# wall time and peak RSS.

# shellcheck source=scripts/install.sh
source scripts/install.sh
[ -x /usr/bin/time ] || install_packages time

measure() {
    local label=$1
    shift
    /usr/bin/time -f '%e %M' -o "$work/$label.time" "$@" >"$work/$label.out"
    read -r seconds kib <"$work/$label.time"
    printf '%-8s %8.1f s   peak RSS %6d MiB\n' "$label" "$seconds" $((kib / 1024))
}
