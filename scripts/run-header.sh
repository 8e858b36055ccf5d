# Sourced by the long-run scripts (crash, app-crash, soak, fuzz): their one
# numeric argument's check, and the header that says when, on which commit,
# at which storage format and on which machine a run's figures were taken,
# which every figure in docs/ must name.

# `whole_number SCRIPT VALUE WHAT`: exits with status 2, naming WHAT,
# unless VALUE is a positive whole number.
whole_number() {
    [[ $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || {
        printf '%s: %s must be a positive whole number, not %q\n' "$1" "$3" "$2" >&2
        exit 2
    }
}

# `run_header TITLE [BINARY]`: prints "== forkful TITLE", the date, the
# commit (marked if the working tree differs from it), the storage format
# and the machine. The format is the one BINARY says it writes
# (`BINARY --version`: "forkful 0.1.0 (storage format 9)"), so a figure
# names the format of the build that made it; a run with no forkful binary
# of its own (the fuzzers link the library) reads `FORMAT_VERSION` from
# crates/store/src/open.rs, and says so.
run_header() {
    local commit format
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [[ $commit != unknown && -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
        commit="$commit (working tree has uncommitted changes)"
    fi
    if [[ -n ${2:-} ]]; then
        format=$("$2" --version | sed -n 's/.*(storage format \([0-9]*\)).*/\1/p')
        format="${format:-unknown} (${2#"$PWD/"} --version)"
    else
        format=$(sed -n 's/^pub const FORMAT_VERSION: u32 = \([0-9]*\);$/\1/p' crates/store/src/open.rs)
        format="${format:-unknown} (FORMAT_VERSION in crates/store/src/open.rs)"
    fi
    echo "== forkful $1"
    echo "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit:   $commit"
    echo "format:   storage format $format"
    echo "machine:  $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), Linux $(uname -r)"
}
