# Sourced by the scripts that need tools from Debian's packages (load,
# crawl, cluster, measure): `install_packages PACKAGE...` installs them
# with apt-get, as root or through sudo, running `apt-get update` first
# only if the install fails (a machine's package lists may be stale), and
# exits naming the packages if it cannot.

install_packages() {
    local apt
    if [[ $(id -u) -eq 0 ]]; then
        apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
    elif command -v sudo >/dev/null; then
        apt=(sudo DEBIAN_FRONTEND=noninteractive apt-get)
    else
        printf '%s: %s not installed, and installing needs root or sudo (apt-get install %s)\n' \
            "${0##*/}" "$*" "$*" >&2
        exit 1
    fi
    printf '%s: installing %s\n' "${0##*/}" "$*" >&2
    local apt_log
    apt_log=$(mktemp)
    if ! "${apt[@]}" install -y -q "$@" >"$apt_log" 2>&1; then
        if ! { "${apt[@]}" update -q && "${apt[@]}" install -y -q "$@"; } >>"$apt_log" 2>&1; then
            tail -n 20 "$apt_log" >&2
            rm -f "$apt_log"
            printf '%s: could not install %s\n' "${0##*/}" "$*" >&2
            exit 1
        fi
    fi
    rm -f "$apt_log"
}
