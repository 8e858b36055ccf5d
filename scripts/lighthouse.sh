#!/usr/bin/env bash
# Lighthouse's SEO audit of every page type of the demo that search engines
# may index, in Debian's Chromium (issue 31: SEO 1.0 on each).
#
#   scripts/lighthouse.sh
#
# It builds target/release/forkful, starts `forkful serve --demo` on a free
# port, installs Lighthouse from the npm registry into target/lighthouse
# (once; Node.js and npm from Debian's packages, Chromium too, when they
# are missing), audits each page below with `--only-categories=seo`, and
# prints each page's score with the audits it failed. It exits non-zero if
# any page scores below 1.0. Pages kept out of the index on purpose (forms,
# diffs, search results, suggestions; each says why in its view) are not
# audited: Lighthouse rightly marks a noindex page down.
#
# Environment (defaults in brackets):
#   LIGHTHOUSE     the npm package to install [lighthouse@12]
#   READY_TIMEOUT  seconds to wait for the server (it seeds first) [120]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

LIGHTHOUSE=${LIGHTHOUSE:-lighthouse@12}
READY_TIMEOUT=${READY_TIMEOUT:-120}

log() { printf 'lighthouse: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

tmp=$(mktemp -d)
server_pid=
cleanup() {
    local rc=$?
    trap - EXIT
    if [[ -n $server_pid ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=scripts/install.sh
source scripts/install.sh
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
command -v chromium >/dev/null || install_packages chromium
command -v npm >/dev/null || install_packages nodejs npm
tools=$root/target/lighthouse
if [[ ! -x $tools/node_modules/.bin/lighthouse ]]; then
    log "installing $LIGHTHOUSE into $tools"
    mkdir -p "$tools"
    (cd "$tools" && npm install --no-audit --no-fund --silent "$LIGHTHOUSE" >/dev/null) ||
        die "could not install $LIGHTHOUSE from the npm registry"
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "== forkful lighthouse (SEO)"
echo "date:       $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit:     $commit"
echo "lighthouse: $("$tools/node_modules/.bin/lighthouse" --version)"
echo "chromium:   $(chromium --version 2>/dev/null | head -n 1)"

log "building (cargo build --release --locked)"
cargo build --release --locked --quiet
bin=${CARGO_TARGET_DIR:-$root/target}/release/forkful
# Made first: the loop below may read it before the server's shell opens it.
: >"$tmp/server.out"
FORKFUL_LOG=warn "$bin" serve --demo --addr 127.0.0.1:0 >>"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
base=$(serving_address "$tmp/server.out" "$tmp/server.err" "$server_pid") ||
    die "the server did not serve"

# One page of each indexable type: the catalog and its orders, tags, the
# about and sign-up pages, recipes (the deepest lineage, the most forked,
# a fork in step with its parent), a past version, a history, a family,
# a lineage and a cook's page.
pages=(
    /
    "/?sort=recent"
    /tags
    /tags/vegan
    /about
    /signup
    /recipes/milk-bread-sourdough-tangzhong
    /recipes/buttermilk-pancakes
    /recipes/banana-bread-salted-crust
    /recipes/shakshuka/versions/1
    /recipes/shakshuka/history
    /recipes/buttermilk-pancakes/forks
    /recipes/milk-bread-sourdough-tangzhong/lineage
    /cooks/lena
)
flags="--headless=new --no-sandbox --disable-gpu --disable-background-networking"
flags+=" --disable-component-update --disable-sync --no-first-run"
failed=0
printf '%-52s %s\n' page "SEO score (failed audits)"
for page in "${pages[@]}"; do
    out=$tmp/report.json
    CHROME_PATH=$(command -v chromium) "$tools/node_modules/.bin/lighthouse" "$base$page" \
        --only-categories=seo --output=json --output-path="$out" --quiet \
        --chrome-flags="$flags" || die "lighthouse failed on $page"
    line=$(python3 - "$out" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
seo = report["categories"]["seo"]
ids = {ref["id"] for ref in seo["auditRefs"] if ref.get("weight", 0) > 0}
failed = [a["id"] for k, a in report["audits"].items()
          if k in ids and a.get("score") is not None and a["score"] < 1]
print(f'{seo["score"]:.2f}' + (f' ({", ".join(failed)})' if failed else ""))
EOF
)
    printf '%-52s %s\n' "$page" "$line"
    [[ $line == 1.00* ]] || failed=1
done
((failed == 0)) || die "a page scored below 1.0"
echo "every page scored 1.0"
