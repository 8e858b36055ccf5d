#!/usr/bin/env bash
# Each invariant of docs/ARCHITECTURE.md is held by a test that can fail.
# This script shows it: for each invariant it makes one mutant of the
# sources (the invariant broken in a small, plausible way), runs the test
# that holds it, and checks that the test fails. A mutant the test lets
# pass, or one that does not compile, fails the script.
#
#   scripts/mutants.sh            every mutant (a rebuild of the tests each)
#   scripts/mutants.sh NAME...    only those
#
# The mutants are made in a git worktree of HEAD under a temporary
# directory, never in this checkout, and built in a target directory of
# their own (target/mutants): cargo names a package's artifacts without
# its path, so a worktree sharing this checkout's target would leave its
# mutated test binaries there, counted as fresh. The first run builds the
# dependencies once; later runs reuse them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
cleanup() {
    git -C "$root" worktree remove --force "$work/tree" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$work/tree" HEAD >/dev/null
tree="$work/tree"
export CARGO_TARGET_DIR="$root/target/mutants"
export CARGO_TERM_COLOR=never

failed=0
ran=0

# mutant NAME FILE FROM TO TARGET TEST
#   Replaces FROM (once, exactly) with TO in FILE, runs TEST (an exact
#   test name) in TARGET (`lib` or `it`), and expects it to fail.
mutant() {
    local name=$1 file=$2 from=$3 to=$4 target=$5 test=$6
    if [ "${#selected[@]}" -gt 0 ] && ! printf '%s\n' "${selected[@]}" | grep -qx "$name"; then
        return
    fi
    ran=$((ran + 1))
    FROM=$from TO=$to python3 - "$tree/$file" <<'PY'
import os, sys
path = sys.argv[1]
text = open(path).read()
old, new = os.environ["FROM"], os.environ["TO"]
if text.count(old) != 1:
    sys.exit(f"{path}: the mutant's text is there {text.count(old)} times, not once")
open(path, "w").write(text.replace(old, new))
PY
    local args=(--test it)
    [ "$target" = lib ] && args=(--lib)
    local log="$work/$name.log"
    # Built first, so that the time limit is the test's alone: a mutant
    # may make its test hang (a transaction past the size limit written
    # whole), which is a test that does not pass, like a failure.
    if ! (cd "$tree" && cargo test --locked "${args[@]}" --no-run) >"$log" 2>&1; then
        echo "BROKEN   $name: the mutant did not build"
        tail -20 "$log"
        failed=1
        git -C "$tree" checkout -- "$file"
        return
    fi
    local status=0
    (cd "$tree" && timeout 300 cargo test --locked "${args[@]}" -- --exact "$test") >>"$log" 2>&1 ||
        status=$?
    if [ "$status" -eq 0 ]; then
        echo "SURVIVED $name: $test passed with the invariant broken"
        failed=1
    elif grep -q '^test result: FAILED' "$log"; then
        echo "caught   $name: $test"
    elif [ "$status" -eq 124 ]; then
        echo "caught   $name: $test (it did not finish in 300 s)"
    else
        echo "BROKEN   $name: the test did not run (see below)"
        tail -20 "$log"
        failed=1
    fi
    git -C "$tree" checkout -- "$file"
}

selected=("$@")

# No layer names one above or beside it.
mutant web-names-the-store src/web/pages.rs \
    'use super::page_cache::Encoding;' \
    'use super::page_cache::Encoding;
use crate::store::Store as _Reached;' \
    it architecture::no_layer_names_one_above_or_beside_it
mutant domain-names-the-web src/domain/pages/recipe.rs \
    'use crate::domain::{DomainError, VersionNumber};' \
    'use crate::domain::{DomainError, VersionNumber};
use crate::web::Site as _Above;' \
    it architecture::no_layer_names_one_above_or_beside_it

# The store is reached through its facade only.
mutant a-store-module-made-public crates/store/src/lib.rs \
    'mod db;' 'pub mod db;' \
    it architecture::the_store_is_reached_through_its_facade_only

# Views keep no state of their own.
mutant a-view-keeps-a-counter src/views/recipe.rs \
    'static NO_LINEAGE: Breadcrumb' \
    'static SEEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static NO_LINEAGE: Breadcrumb' \
    it architecture::no_view_keeps_a_cache_or_any_state_of_its_own

# A page is built beside the snapshot, from its primitives, not on it.
mutant a-page-builder-on-the-snapshot src/domain/pages/history.rs \
    'pub fn history(' \
    'impl Snapshot {
    pub fn history_page(&self) {}
}

pub fn history(' \
    it architecture::pages_are_built_beside_the_snapshot_not_on_it

# An export imports: a line is read against its own transaction's schema.
mutant a-line-read-against-the-schema-before crates/store/src/transfer.rs \
    '        if pending.last().is_some_and(|d| d.tx != line.tx) {
            finish(&mut pending, &mut schema, pending_line, next_id)?;
        }
        let (ident, datom) = typed_datom(line, &schema).map_err(fail)?;' \
    '        let opens = pending.last().is_some_and(|d| d.tx != line.tx);
        let (ident, datom) = typed_datom(line, &schema).map_err(fail)?;
        if opens {
            finish(&mut pending, &mut schema, pending_line, next_id)?;
        }' \
    it durability::a_transaction_may_open_with_an_attribute_the_one_before_installed

# No transaction is visible to a reader before it is durable.
mutant readers-get-the-applied-basis crates/store/src/handle.rs \
    '(published.basis, published.schema.clone())' \
    '(self.inner.applied.load(Ordering::Acquire), published.schema.clone())' \
    it faults::a_transaction_is_invisible_to_readers_until_its_flush_returns

# No write is decided on a published value: an edit from an old version
# is refused by the writer, whoever else wrote meanwhile.
mutant an-edit-from-an-old-version-accepted src/domain/write/mod.rs \
    'if based_on == newest {' 'if based_on <= newest {' \
    it races::of_many_writers_editing_from_one_version_exactly_one_makes_a_version

# Only its author changes a recipe, decided in the writer.
mutant any-cook-may-edit src/domain/write/mod.rs \
    'if recipe.author.as_deref() == Some(change.author.as_str()) {' \
    'if recipe.author.is_some() || change.author.is_empty() {' \
    it domain::the_domain_refuses_another_cooks_edit_and_retirement

# No unacknowledged write survives a failed flush.
mutant a-failed-flush-undoes-nothing crates/store/src/undo.rs \
    'let mut writer = self.lock_writer();' \
    'let mut writer = self.lock_writer();
        if std::hint::black_box(true) {
            return;
        }' \
    it faults::after_a_failed_flush_nothing_is_written_and_the_failed_write_never_lands

# No failed transaction writes anything: every check runs before the batch.
mutant the-size-limit-unchecked crates/store/src/writer.rs \
    'if report.datoms.len() > MAX_TX_DATOMS || bytes > MAX_TX_BYTES {' \
    'if std::hint::black_box(false) && (report.datoms.len() > MAX_TX_DATOMS || bytes > MAX_TX_BYTES) {' \
    it faults::a_transaction_over_the_size_limit_is_refused_and_writes_nothing

# With a log attached, no transaction is applied before the log has it.
mutant a-write-not-in-the-log crates/store/src/durability.rs \
    'self.log.append(&entry)?;' \
    'let _ = (&self.log, &entry);' \
    it log::each_write_is_in_the_log_and_a_node_is_built_from_the_log_alone

# No attribute changes type, cardinality, uniqueness or drops its index.
mutant cardinality-may-change crates/store/src/schema.rs \
    'if old.cardinality != new.cardinality {' \
    'if old.cardinality != new.cardinality && std::hint::black_box(false) {' \
    it transactions::schema_changes_that_would_break_stored_datoms_are_refused

# No user-written text reaches a page unescaped.
mutant markdown-passes-raw-html src/views/markdown.rs \
    'Event::Html(html) | Event::InlineHtml(html) => Some(Event::Text(html)),' \
    'Event::Html(html) | Event::InlineHtml(html) => Some(Event::Html(html)),' \
    it xss::hostile_text_in_every_field_runs_nowhere

# A recipe's fields come from one table: a row the schema forgot.
mutant a-field-row-not-installed src/domain/site_schema.rs \
    'definitions.extend(FIELDS.iter().filter(|f| !listed(f)).map(of_field));' \
    'definitions.extend(FIELDS.iter().filter(|f| !listed(f) && f.name != "language").map(of_field));' \
    lib domain::site_schema::tests::every_field_of_the_table_is_installed_once_after_the_listed_order

# A merge's conflict is a whole block of each side: hunks cut into
# one-line pieces (as the merge once did) must fail the property test.
mutant merge-hunks-line-by-line src/domain/merge/blocks.rs \
    '            } else {
                out.push(Hunk {
                    start: i,
                    end: pi,
                    lines: (j, pj),
                });
            }' \
    '            } else {
                let paired = (pi - i).min(pj - j);
                for k in 0..paired {
                    out.push(Hunk { start: i + k, end: i + k + 1, lines: (j + k, j + k + 1) });
                }
                out.push(Hunk { start: i + paired, end: pi, lines: (j + paired, pj) });
            }' \
    lib domain::merge::tests::every_resolution_taken_from_one_side_or_both_is_that_sides_whole_blocks

# An accept acts only on the fork's version its review showed.
mutant an-accept-takes-what-it-never-showed src/domain/write/suggestions.rs \
    'if suggestion.from_version != review.fork_version {' \
    'if suggestion.from_version != review.fork_version && std::hint::black_box(false) {' \
    it merges::an_accept_or_decline_acts_only_on_the_fork_version_its_review_showed

if [ "$ran" -eq 0 ]; then
    echo "no mutant is called ${selected[*]}" >&2
    exit 2
fi
if [ "$failed" -ne 0 ]; then
    echo "some invariant is not held by its test" >&2
    exit 1
fi
echo "all $ran mutants caught"
