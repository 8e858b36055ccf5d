//! Keeping the server's resident memory under its limit, `--memory-mb` and
//! sled's `--cache-mb` together, as far as the caches can make room.
//!
//! The caches are bounded by what they weigh, but what the process holds
//! is more than that: sled keeps memory for every page of the store
//! whether it is cached or not (the server holds 74-78 MiB once it has
//! opened 100,000 full recipes), and the allocator holds more than the caches'
//! live bytes once entries of every size have come and gone (in a crawl of
//! 100,000 recipe pages, 256 MiB of cache budgets cost 328 MiB of resident
//! memory: docs/journal/13-kept-pages.md). Weighing those in each cache would be
//! guessing; so a thread reads what the kernel counts (`VmRSS`) four times
//! a second and, when the process comes near its limit, has the caches
//! evict down to a smaller share of their budgets, growing back when there
//! is room again. The limit is kept by the caches giving way, never by
//! refusing requests; where sled and the process alone need more, nothing
//! here can keep it, and the thread says so once.

use std::sync::Weak;
use std::time::Duration;

use super::Site;

/// How often resident memory is read.
pub const TICK: Duration = Duration::from_millis(250);

/// Ticks to wait after a cut before judging again: mimalloc gives freed
/// pages back to the system about a second after they are freed (when the
/// threads that own them next allocate, which serving threads do), so
/// resident memory shows a cut only then.
const SETTLE_TICKS: u32 = 6;

/// What a cut leaves of the caches' share.
const CUT: f64 = 0.75;

/// What a tick with room adds back to the share.
const GROW: f64 = 1.0 / 32.0;

/// The least share. quick_cache scales its record of evicted keys (what
/// tells it an entry came back) with its capacity, rounding down, so each
/// cut and regrowth loses a little of it; a cache cut to almost nothing
/// would lose it all. An eighth of the budgets still keeps the hot pages
/// and entities of a catalog.
pub const LEAST_SHARE: f64 = 1.0 / 8.0;

/// Decides the share of their budgets the caches may hold, from resident
/// memory read tick by tick: a pure function of what it was shown, so
/// that it can be tested without a server.
#[derive(Debug, Clone)]
pub struct Governor {
    limit: u64,
    share: f64,
    /// Ticks still to wait after a cut.
    settling: u32,
}

impl Governor {
    /// A governor keeping resident memory under `limit` bytes, the caches
    /// starting at their whole budgets.
    pub fn new(limit: u64) -> Governor {
        Governor {
            limit,
            share: 1.0,
            settling: 0,
        }
    }

    /// Cut above this: a sixteenth below the limit, which a crawl's
    /// growth between two ticks stays well inside (about 6 MiB).
    fn high(&self) -> u64 {
        self.limit - self.limit / 16
    }

    /// Grow below this: an eighth below the limit, so that growing does
    /// not bring the next cut at once, and a cut that settles a little under
    /// `high` still grows back.
    fn low(&self) -> u64 {
        self.limit - self.limit / 8
    }

    /// The share now, resident memory being `rss` bytes and the caches
    /// holding `held` of their budgets together (0 to 1). A cut is of what
    /// they hold, not of their budgets: caches that are not full yet (early
    /// in a crawl) would give nothing back. One share is set for all of
    /// them, so a cache fuller than the others gives up more than a
    /// quarter of what it holds.
    pub fn share(&mut self, rss: u64, held: f64) -> f64 {
        if self.settling > 0 {
            self.settling -= 1;
        } else if rss > self.high() && self.share > LEAST_SHARE {
            self.share = (self.share.min(held) * CUT).max(LEAST_SHARE);
            self.settling = SETTLE_TICKS;
        } else if rss < self.low() && self.share < 1.0 {
            self.share = (self.share + GROW).min(1.0);
        }
        self.share
    }

    /// Whether the caches are as small as they go and memory is still
    /// over the limit: the store and the process alone need more.
    pub fn overwhelmed(&self, rss: u64) -> bool {
        self.share <= LEAST_SHARE && rss > self.limit
    }
}

/// The bytes of `budget` that `share` of it allows (at least one: a
/// quick_cache of capacity 0 would lose its proportions).
pub fn share_of(budget: u64, share: f64) -> u64 {
    ((budget as f64 * share.clamp(0.0, 1.0)) as u64).max(1)
}

/// This process's resident memory in bytes, as the kernel counts it; None
/// where there is no `/proc` (the limit is then not kept).
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Keeps `site`'s process under `limit` bytes of resident memory from a
/// thread of its own, until the site is dropped.
pub fn keep(site: Weak<Site>, limit: u64) -> std::io::Result<()> {
    if resident_bytes().is_none() {
        tracing::warn!("resident memory cannot be read here: the memory limit is not kept");
        return Ok(());
    }
    std::thread::Builder::new()
        .name("memory-limit".into())
        .spawn(move || {
            let mut governor = Governor::new(limit);
            let (mut warned, mut unread) = (false, false);
            loop {
                std::thread::sleep(TICK);
                let Some(site) = site.upgrade() else { return };
                // A read that fails (no file descriptor left, under a
                // flood of connections) skips a tick, not the rest.
                let Some(rss) = resident_bytes() else {
                    if !unread {
                        unread = true;
                        tracing::warn!("resident memory could not be read: skipping a tick");
                    }
                    continue;
                };
                let before = governor.share;
                let share = governor.share(rss, site.cache_fill());
                if share != before {
                    site.set_cache_share(share);
                    tracing::debug!(
                        resident_mib = rss >> 20,
                        limit_mib = limit >> 20,
                        share,
                        "caches resized to keep the memory limit"
                    );
                }
                if governor.overwhelmed(rss) && !warned {
                    warned = true;
                    tracing::warn!(
                        resident_mib = rss >> 20,
                        limit_mib = limit >> 20,
                        "over the memory limit with the caches at their least: sled and \
                         the process alone need more than --memory-mb and --cache-mb"
                    );
                }
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn memory_under_the_limit_leaves_the_caches_whole() {
        let mut governor = Governor::new(512 * MIB);
        for rss in [100, 300, 470, 479] {
            assert_eq!(governor.share(rss * MIB, 1.0), 1.0);
        }
    }

    #[test]
    fn memory_near_the_limit_cuts_then_waits_for_the_cut_to_show() {
        let mut governor = Governor::new(512 * MIB);
        assert_eq!(governor.share(490 * MIB, 1.0), CUT);
        // Still high while the allocator has not given the memory back:
        // no second cut until the cut has had time to show.
        for _ in 0..SETTLE_TICKS {
            assert_eq!(governor.share(500 * MIB, CUT), CUT);
        }
        assert_eq!(governor.share(500 * MIB, CUT), CUT * CUT);
    }

    #[test]
    fn a_cut_is_of_what_the_caches_hold_not_of_their_budgets() {
        let mut governor = Governor::new(512 * MIB);
        // Caches a half full (early in a crawl): a cut to three quarters
        // of the budgets would evict nothing.
        assert_eq!(governor.share(490 * MIB, 0.5), 0.5 * CUT);
    }

    #[test]
    fn memory_well_under_the_limit_grows_the_share_back_to_whole() {
        let mut governor = Governor::new(512 * MIB);
        governor.share(490 * MIB, 1.0);
        for _ in 0..SETTLE_TICKS {
            governor.share(300 * MIB, CUT);
        }
        // Between an eighth and a sixteenth below the limit: no change.
        assert_eq!(governor.share(460 * MIB, CUT), CUT);
        let mut last = CUT;
        for _ in 0..8 {
            let share = governor.share(440 * MIB, last);
            assert!(share > last);
            last = share;
        }
        for _ in 0..64 {
            governor.share(300 * MIB, 1.0);
        }
        assert_eq!(governor.share(300 * MIB, 1.0), 1.0);
    }

    #[test]
    fn a_process_over_its_limit_whatever_the_caches_do_keeps_them_at_their_least() {
        let mut governor = Governor::new(64 * MIB);
        assert!(!governor.overwhelmed(100 * MIB), "not before it has tried");
        for _ in 0..200 {
            governor.share(100 * MIB, 1.0);
        }
        assert_eq!(governor.share(100 * MIB, 1.0), LEAST_SHARE);
        assert!(governor.overwhelmed(100 * MIB));
        assert!(!governor.overwhelmed(60 * MIB));
    }

    #[test]
    fn a_share_is_a_part_of_the_budget_and_never_nothing() {
        assert_eq!(share_of(1000, 0.25), 250);
        assert_eq!(share_of(1000, 0.0), 1);
        assert_eq!(share_of(1000, 2.0), 1000);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn resident_memory_follows_what_the_process_touches() {
        let before = resident_bytes().expect("Linux has /proc/self/status");
        let touched = vec![1u8; 64 << 20];
        let after = resident_bytes().unwrap();
        // Other tests free memory meanwhile, but not 32 MiB of it.
        assert!(after >= before + (32 << 20), "{before} then {after}");
        drop(std::hint::black_box(touched));
    }
}
