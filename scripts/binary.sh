# Sourced by the scripts that run a release build of forkful (load, crawl,
# cluster), after they define `log` and `die`: `forkful_binary` sets `bin`
# to $BIN, another build's binary to compare this one with, or else builds
# this tree's (cargo build --release --locked) and sets `bin` to it; it
# dies if BIN names no executable. Run from the repository's root.

forkful_binary() {
    if [[ -n ${BIN:-} ]]; then
        bin=$BIN
        [[ -x $bin ]] || die "BIN=$bin is not an executable"
    else
        log "building (cargo build --release --locked)"
        cargo build --release --locked --quiet
        bin=${CARGO_TARGET_DIR:-$PWD/target}/release/forkful
    fi
}
