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
const CURSOR: &[u8] = b"cursor";

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
}

impl Deliveries {
    pub(super) fn new(queue: Keyspace) -> Deliveries {
        Deliveries { queue }
    }

    /// Queues `deliveries`, each kept once however often it is queued; a
    /// delivery queued already is left as it is (claimed, or waiting).
    pub fn queue(&self, deliveries: &[Delivery]) -> Result<(), DomainError> {
        for delivery in deliveries {
            self.queue
                .compare_and_swap(&delivery.key(), None, Some(&delivery.encode()))?;
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
    /// node, each leased for `lease_millis`: this node's to send.
    pub fn claim_due(
        &self,
        now: i64,
        lease_millis: i64,
        most: usize,
    ) -> Result<Vec<Claimed>, DomainError> {
        let mut claimed = Vec::new();
        for entry in self.queue.scan_prefix(QUEUED) {
            if claimed.len() >= most {
                break;
            }
            let (key, record) = entry?;
            let Ok(mut delivery) = serde_json::from_slice::<Delivery>(&record) else {
                continue;
            };
            if delivery.due > now || delivery.leased_until > now {
                continue;
            }
            delivery.leased_until = now + lease_millis;
            let mine = delivery.encode();
            if self
                .queue
                .compare_and_swap(&key, Some(&record), Some(&mine))?
            {
                claimed.push(Claimed {
                    key: key.to_vec(),
                    record: mine,
                    delivery,
                });
            }
        }
        Ok(claimed)
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
        delivery.attempts += 1;
        let next = match outcome {
            Outcome::Failed if delivery.attempts < MAX_ATTEMPTS => {
                let wait = backoff_millis
                    .saturating_mul(1 << (delivery.attempts - 1).min(20))
                    .min(MAX_BACKOFF_MILLIS);
                delivery.due = now + wait;
                delivery.leased_until = 0;
                Some(delivery.encode())
            }
            Outcome::Delivered | Outcome::Failed | Outcome::Refused => None,
        };
        Ok(self
            .queue
            .compare_and_swap(&key, Some(&record), next.as_deref())?)
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
