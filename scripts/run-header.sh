# Sourced by the long-run scripts (crash, app-crash, soak, fuzz): their one
# numeric argument's check, and the header that says when, on which commit
# and on which machine a run's figures were taken, which every figure in
# docs/ must name.

# `whole_number SCRIPT VALUE WHAT`: exits with status 2, naming WHAT,
# unless VALUE is a positive whole number.
whole_number() {
    [[ $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || {
        printf '%s: %s must be a positive whole number, not %q\n' "$1" "$3" "$2" >&2
        exit 2
    }
}

# `run_header TITLE`: prints "== forkful TITLE", the date, the commit
# (marked if the working tree differs from it) and the machine.
run_header() {
    local commit
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [[ $commit != unknown && -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
        commit="$commit (working tree has uncommitted changes)"
    fi
    echo "== forkful $1"
    echo "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit:   $commit"
    echo "machine:  $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), Linux $(uname -r)"
}
