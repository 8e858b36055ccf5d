//! The queue of activities to deliver to other sites' inboxes, kept
//! durably so that a restart (or a crash) loses none, and claimed one
//! delivery at a time so that of several nodes only one sends each.
//!
//! A delivery is kept under a key made from its activity's id and its
//! inbox, so queueing the same one twice keeps one. A node claims a due
//! delivery by compare-and-swap of its record (writing a lease on it), and
//! once sent removes it, or puts it back due later, each by compare-and-
//! swap of the record it claimed: a node whose lease ran out (it stalled,
//! or died) loses the delivery to the next claim, and a lease that runs
//! out during a send may let it go twice, which receivers take once (they
//! apply an activity once by its id). Also kept here: how far into the
//! store's transactions the activities have been queued (`cursor`).
//!
//! Each delivery is also listed under when it is due (`d/<due>/<key>`), so
//! that a claim reads the deliveries due now, not the whole queue (a site
//! down for a day holds many): an entry is written before the record it
//! lists is, and one that no longer matches its record (delivered, or due
//! another time) is removed when a claim meets it. A queue kept before the
//! list was is listed once, by the first claim of each process.

use blake2::{Blake2b, Digest};
use serde::{Deserialize, Serialize};

use super::super::DomainError;
use crate::store::Keyspace;

/// Attempts after which a delivery is given up: with the backoff, about a
/// day and a half of an inbox that never answers.
pub const MAX_ATTEMPTS: u32 = 12;
/// The longest wait between two attempts, in milliseconds.
const MAX_BACKOFF_MILLIS: i64 = 6 * 3_600 * 1_000;
/// Deliveries' keys start with this; the cursor's key does not.
const QUEUED: &[u8] = b"q/";
/// The list of deliveries by when they are due: `d/<due, 16 hex digits>/`
/// and the delivery's key.
const DUE: &[u8] = b"d/";
const CURSOR: &[u8] = b"cursor";
/// Entries of the due list a claim reads at a time.
const DUE_PAGE: usize = 64;

/// One activity to send to one inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// The inbox's address.
    pub inbox: String,
    /// The cook whose key signs it, by handle.
    pub signer: String,
    /// The activity's id.
    pub activity_id: String,
    /// The activity, as sent (JSON).
    pub body: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// When it is due next, in milliseconds since the epoch.
    pub due: i64,
    /// Until when the node that claimed it has it.
    #[serde(default)]
    pub leased_until: i64,
}

impl Delivery {
    /// A delivery of `body` (the activity `activity_id`) to `inbox`,
    /// signed by `signer`, due at once.
    pub fn new(inbox: &str, signer: &str, activity_id: &str, body: String, now: i64) -> Delivery {
        Delivery {
            inbox: inbox.to_owned(),
            signer: signer.to_owned(),
            activity_id: activity_id.to_owned(),
            body,
            attempts: 0,
            due: now,
            leased_until: 0,
        }
    }

    fn key(&self) -> Vec<u8> {
        let mut hasher = Blake2b::<blake2::digest::consts::U16>::new();
        hasher.update(self.activity_id.as_bytes());
        hasher.update([0]);
        hasher.update(self.inbox.as_bytes());
        let mut key = QUEUED.to_vec();
        key.extend_from_slice(crate::domain::hex(&hasher.finalize()).as_bytes());
        key
    }

    fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a delivery serialises")
    }
}

/// The due list's entry for the delivery kept at `key`, due at `due`.
fn due_entry(due: i64, key: &[u8]) -> Vec<u8> {
    let mut entry = due_bound(due);
    entry.push(b'/');
    entry.extend_from_slice(key);
    entry
}

/// Where the due list's entries due at `due` start: in due order, as keys
/// compare (a time before the epoch counts as the epoch).
fn due_bound(due: i64) -> Vec<u8> {
    let mut bound = DUE.to_vec();
    bound.extend_from_slice(format!("{:016x}", due.max(0)).as_bytes());
    bound
}

/// The delivery's key and when it is due, from a due list entry.
fn read_due_entry(entry: &[u8]) -> Option<(i64, &[u8])> {
    let rest = entry.strip_prefix(DUE)?;
    let (due, key) = (rest.get(..16)?, rest.get(17..)?);
    let due = i64::from_str_radix(std::str::from_utf8(due).ok()?, 16).ok()?;
    Some((due, key))
}

/// A delivery one node holds: what it claimed, to settle by.
#[derive(Debug, Clone)]
pub struct Claimed {
    key: Vec<u8>,
    record: Vec<u8>,
    pub delivery: Delivery,
}

/// How a claimed delivery's attempt went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The inbox took it: it is done.
    Delivered,
    /// It could not be sent now: try again later, unless that was the last
    /// attempt.
    Failed,
    /// The inbox will never take it (it refused it, or is blocked): give up.
    Refused,
}

/// The queue; see the module's documentation.
#[derive(Clone)]
pub struct Deliveries {
    queue: Keyspace,
    /// Whether this process listed, by when it is due, each delivery kept
    /// before the due list was.
    listed: std::sync::Arc<std::sync::OnceLock<()>>,
}

impl Deliveries {
    pub(super) fn new(queue: Keyspace) -> Deliveries {
        Deliveries {
            queue,
            listed: Default::default(),
        }
    }

    /// Queues `deliveries`, each kept once however often it is queued; a
    /// delivery queued already is left as it is (claimed, or waiting).
    pub fn queue(&self, deliveries: &[Delivery]) -> Result<(), DomainError> {
        for delivery in deliveries {
            let key = delivery.key();
            let listed = due_entry(delivery.due, &key);
            self.queue.insert(&listed, b"")?;
            if self
                .queue
                .compare_and_swap(&key, None, Some(&delivery.encode()))?
            {
                // Again, after the record: a claim that met the entry before
                // the record was written may have removed it (`unlist`).
                self.queue.insert(&listed, b"")?;
                continue;
            }
            // Queued already: its own entry lists it, unless it is this one.
            let kept = self.queue.get(&key)?;
            let kept = kept.and_then(|r| serde_json::from_slice::<Delivery>(&r).ok());
            if kept.is_none_or(|kept| due_bound(kept.due) != due_bound(delivery.due)) {
                self.queue.remove(&listed)?;
            }
        }
        Ok(())
    }

    /// Every delivery waiting, claimed or not.
    pub fn waiting(&self) -> Result<Vec<Delivery>, DomainError> {
        let mut waiting = Vec::new();
        for entry in self.queue.scan_prefix(QUEUED) {
            let (_, record) = entry?;
            if let Ok(delivery) = serde_json::from_slice(&record) {
                waiting.push(delivery);
            }
        }
        Ok(waiting)
    }

    /// Claims up to `most` deliveries due at `now` and not leased to a
    /// node, each leased for `lease_millis`: this node's to send. Reads the
    /// due list up to `now`, a page at a time.
    pub fn claim_due(
        &self,
        now: i64,
        lease_millis: i64,
        most: usize,
    ) -> Result<Vec<Claimed>, DomainError> {
        self.list_unlisted()?;
        let mut claimed = Vec::new();
        let end = due_bound(now.saturating_add(1));
        let mut from = DUE.to_vec();
        while claimed.len() < most {
            let page = self
                .queue
                .scan_range(&from, &end, DUE_PAGE)
                .map(|entry| entry.map(|(key, _)| key.to_vec()))
                .collect::<Result<Vec<_>, _>>()?;
            for listed in &page {
                if claimed.len() >= most {
                    break;
                }
                if let Some(mine) = self.claim_listed(listed, now, lease_millis)? {
                    claimed.push(mine);
                }
            }
            match page.last() {
                Some(last) if page.len() == DUE_PAGE => {
                    from = last.clone();
                    from.push(0);
                }
                _ => break,
            }
        }
        Ok(claimed)
    }

    /// Claims the delivery the due list's entry `listed` lists, if it is
    /// due and not leased; removes an entry that no longer lists its
    /// delivery as due then.
    fn claim_listed(
        &self,
        listed: &[u8],
        now: i64,
        lease_millis: i64,
    ) -> Result<Option<Claimed>, DomainError> {
        let Some((due, key)) = read_due_entry(listed) else {
            self.queue.remove(listed)?;
            return Ok(None);
        };
        let Some(record) = self.queue.get(key)? else {
            self.unlist(listed, key, due)?;
            return Ok(None);
        };
        let Ok(mut delivery) = serde_json::from_slice::<Delivery>(&record) else {
            return Ok(None);
        };
        if due_bound(delivery.due) != due_bound(due) {
            self.unlist(listed, key, due)?;
            return Ok(None);
        }
        if delivery.due > now || delivery.leased_until > now {
            return Ok(None);
        }
        delivery.leased_until = now + lease_millis;
        let mine = delivery.encode();
        if !self
            .queue
            .compare_and_swap(key, Some(&record), Some(&mine))?
        {
            return Ok(None);
        }
        Ok(Some(Claimed {
            key: key.to_vec(),
            record: mine,
            delivery,
        }))
    }

    /// Removes the due list's entry `listed` (of the delivery at `key`, due
    /// at `due`), which listed no delivery due then when it was read. A
    /// writer lists a delivery before and after writing its record (so a
    /// crash leaves no delivery unlisted, and a removal between the two is
    /// undone); the record read again after the removal puts back an entry
    /// that a writer made true meanwhile.
    fn unlist(&self, listed: &[u8], key: &[u8], due: i64) -> Result<(), DomainError> {
        self.queue.remove(listed)?;
        let now = self.queue.get(key)?;
        let now = now.and_then(|r| serde_json::from_slice::<Delivery>(&r).ok());
        if now.is_some_and(|d| due_bound(d.due) == due_bound(due)) {
            self.queue.insert(listed, b"")?;
        }
        Ok(())
    }

    /// Lists by when it is due each delivery kept before the due list was:
    /// once a process.
    fn list_unlisted(&self) -> Result<(), DomainError> {
        if self.listed.get().is_some() {
            return Ok(());
        }
        let mut entries = Vec::new();
        for entry in self.queue.scan_prefix(QUEUED) {
            let (key, record) = entry?;
            if let Ok(delivery) = serde_json::from_slice::<Delivery>(&record) {
                entries.push((due_entry(delivery.due, &key), Vec::new()));
            }
        }
        if !entries.is_empty() {
            self.queue.insert_all(&entries)?;
        }
        let _ = self.listed.set(());
        Ok(())
    }

    /// Settles a claimed delivery by how its attempt went at `now`, with
    /// a first wait of `backoff_millis` after a failure, doubled each time.
    /// Returns whether it was still this node's to settle (a lease that
    /// ran out may have let another node claim it).
    pub fn settle(
        &self,
        claimed: Claimed,
        outcome: Outcome,
        now: i64,
        backoff_millis: i64,
    ) -> Result<bool, DomainError> {
        let Claimed {
            key,
            record,
            mut delivery,
        } = claimed;
        let listed = due_entry(delivery.due, &key);
        let was_due = delivery.due;
        delivery.attempts += 1;
        let next = match outcome {
            Outcome::Failed if delivery.attempts < MAX_ATTEMPTS => {
                let wait = backoff_millis
                    .saturating_mul(1 << (delivery.attempts - 1).min(20))
                    .min(MAX_BACKOFF_MILLIS);
                delivery.due = now + wait;
                delivery.leased_until = 0;
                // Listed before it is due then: a crash between the two
                // leaves an entry a claim removes, never a delivery unlisted.
                self.queue.insert(&due_entry(delivery.due, &key), b"")?;
                Some(delivery.encode())
            }
            Outcome::Delivered | Outcome::Failed | Outcome::Refused => None,
        };
        let settled = self
            .queue
            .compare_and_swap(&key, Some(&record), next.as_deref())?;
        if settled && next.is_some() {
            // Again, after the record (as `queue` does).
            self.queue.insert(&due_entry(delivery.due, &key), b"")?;
        }
        // The entry that listed it as claimed, unless it is due again then.
        if settled && (next.is_none() || delivery.due != was_due) {
            self.queue.remove(&listed)?;
        }
        Ok(settled)
    }

    /// The basis up to which the store's transactions have been turned
    /// into deliveries, if any has been.
    pub fn cursor(&self) -> Result<Option<u64>, DomainError> {
        Ok(self
            .queue
            .get(CURSOR)?
            .and_then(|value| std::str::from_utf8(&value).ok()?.parse().ok()))
    }

    /// Moves the cursor from `from` (`None`: none yet) to `to`; whether it
    /// was still at `from` (another node may have moved it first).
    pub fn move_cursor(&self, from: Option<u64>, to: u64) -> Result<bool, DomainError> {
        let from = from.map(|t| t.to_string());
        Ok(self.queue.compare_and_swap(
            CURSOR,
            from.as_deref().map(str::as_bytes),
            Some(to.to_string().as_bytes()),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn queue() -> (Store, Deliveries) {
        let store = Store::temporary().unwrap();
        let deliveries = Deliveries::new(store.keyspace("deliveries").unwrap());
        (store, deliveries)
    }

    fn due_at(id: &str, due: i64) -> Delivery {
        Delivery::new("https://b.example/inbox", "ann", id, "{}".into(), due)
    }

    /// The due list's entries.
    fn listed(deliveries: &Deliveries) -> usize {
        deliveries.queue.scan_prefix(DUE).count()
    }

    fn ids(claimed: &[Claimed]) -> Vec<&str> {
        claimed
            .iter()
            .map(|c| c.delivery.activity_id.as_str())
            .collect()
    }

    #[test]
    fn a_claim_takes_what_is_due_soonest_first_and_leaves_what_is_not_due() {
        let (_store, deliveries) = queue();
        deliveries
            .queue(&[due_at("late", 200), due_at("b", 100), due_at("a", 50)])
            .unwrap();
        // Queued again: one of each, listed once.
        deliveries
            .queue(&[due_at("a", 50), due_at("a", 70)])
            .unwrap();
        assert_eq!(listed(&deliveries), 3);
        let claimed = deliveries.claim_due(150, 1_000, 10).unwrap();
        assert_eq!(ids(&claimed), ["a", "b"]);
        // Leased: not claimed again, by this node or another.
        assert!(deliveries.claim_due(150, 1_000, 10).unwrap().is_empty());
        for c in claimed {
            assert!(deliveries.settle(c, Outcome::Delivered, 160, 10).unwrap());
        }
        assert_eq!(listed(&deliveries), 1);
        assert_eq!(
            ids(&deliveries.claim_due(300, 1_000, 10).unwrap()),
            ["late"]
        );
    }

    #[test]
    fn a_failed_delivery_is_listed_again_when_it_is_next_due_and_only_then() {
        let (_store, deliveries) = queue();
        deliveries.queue(&[due_at("a", 0)]).unwrap();
        let claimed = deliveries.claim_due(10, 1_000, 1).unwrap().pop().unwrap();
        assert!(deliveries
            .settle(claimed, Outcome::Failed, 10, 100)
            .unwrap());
        assert_eq!(listed(&deliveries), 1);
        assert!(deliveries.claim_due(109, 1_000, 1).unwrap().is_empty());
        let again = deliveries.claim_due(110, 1_000, 1).unwrap().pop().unwrap();
        assert_eq!(again.delivery.attempts, 1);
        assert!(deliveries
            .settle(again, Outcome::Refused, 110, 100)
            .unwrap());
        assert_eq!(listed(&deliveries), 0);
        assert!(deliveries.waiting().unwrap().is_empty());
    }

    #[test]
    fn a_lease_lost_leaves_the_delivery_listed_once_and_a_stale_entry_is_removed() {
        let (_store, deliveries) = queue();
        deliveries.queue(&[due_at("a", 0)]).unwrap();
        let first = deliveries.claim_due(10, 5, 1).unwrap().pop().unwrap();
        // The lease runs out: another node claims it, and the first node's
        // settling (listing it for later) is refused.
        let second = deliveries.claim_due(20, 1_000, 1).unwrap().pop().unwrap();
        assert!(!deliveries.settle(first, Outcome::Failed, 20, 100).unwrap());
        assert_eq!(listed(&deliveries), 2);
        assert!(deliveries
            .settle(second, Outcome::Failed, 30, 1_000)
            .unwrap());
        // The entry the lost settle wrote (due at 120) lists a delivery due
        // at 1,030: a claim at 500 meets it and removes it.
        assert!(deliveries.claim_due(500, 1_000, 1).unwrap().is_empty());
        assert_eq!(listed(&deliveries), 1);
        assert_eq!(ids(&deliveries.claim_due(1_030, 1_000, 1).unwrap()), ["a"]);
    }

    #[test]
    fn deliveries_queued_while_another_thread_claims_are_each_claimed_once() {
        let (_store, deliveries) = queue();
        deliveries.claim_due(0, 1_000, 1).unwrap();
        const QUEUED: usize = 1_000;
        let done = std::sync::atomic::AtomicBool::new(false);
        let claimed = std::thread::scope(|scope| {
            let claimer = scope.spawn(|| {
                let mut claimed = Vec::new();
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    let got = deliveries.claim_due(10, 1_000_000, 8).unwrap();
                    claimed.extend(got.into_iter().map(|c| c.delivery.activity_id));
                }
                claimed
            });
            for n in 0..QUEUED {
                deliveries.queue(&[due_at(&n.to_string(), 5)]).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            claimer.join().unwrap()
        });
        // What the claiming thread did not get is listed still, and a
        // claim now gets it: none was left off the list.
        let rest = deliveries.claim_due(10, 1_000_000, QUEUED).unwrap();
        let mut all: Vec<String> = claimed;
        all.extend(rest.into_iter().map(|c| c.delivery.activity_id));
        all.sort();
        all.dedup();
        assert_eq!(all.len(), QUEUED);
    }

    #[test]
    fn a_claim_that_removes_an_entry_as_a_writer_makes_it_true_puts_it_back() {
        let (_store, deliveries) = queue();
        deliveries.claim_due(0, 1_000, 1).unwrap();
        let a = due_at("a", 5);
        let entry = due_entry(5, &a.key());
        deliveries.queue.insert(&entry, b"").unwrap();
        // The claim read no record; the writer writes it (and lists it
        // again) before the claim removes the entry.
        assert!(deliveries
            .queue
            .compare_and_swap(&a.key(), None, Some(&a.encode()))
            .unwrap());
        deliveries.unlist(&entry, &a.key(), 5).unwrap();
        assert_eq!(ids(&deliveries.claim_due(20, 1_000, 1).unwrap()), ["a"]);
    }

    #[test]
    fn a_queue_kept_before_the_due_list_is_listed_by_the_next_process() {
        let (store, deliveries) = queue();
        // As an older forkful kept it: the record alone.
        let old = due_at("old", 5);
        deliveries.queue.insert(&old.key(), &old.encode()).unwrap();
        let restarted = Deliveries::new(store.keyspace("deliveries").unwrap());
        assert_eq!(ids(&restarted.claim_due(10, 1_000, 5).unwrap()), ["old"]);
    }

    #[test]
    fn a_claim_reads_past_a_full_page_of_entries_it_cannot_take() {
        let (_store, deliveries) = queue();
        let many: Vec<Delivery> = (0..DUE_PAGE + 3)
            .map(|n| due_at(&format!("held {n}"), 1))
            .collect();
        deliveries.queue(&many).unwrap();
        // Every one of them claimed (leased) by another node.
        let held = deliveries.claim_due(2, 1_000, DUE_PAGE + 3).unwrap();
        assert_eq!(held.len(), DUE_PAGE + 3);
        deliveries.queue(&[due_at("free", 2)]).unwrap();
        assert_eq!(ids(&deliveries.claim_due(3, 1_000, 1).unwrap()), ["free"]);
    }
}
