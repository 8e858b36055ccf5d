//! Telling other sites: a thread of its own (never a worker that serves
//! pages) that turns the store's new transactions into deliveries to the
//! followers of each recipe's author, and sends the deliveries that are
//! due, signed, retrying failures with backoff.
//!
//! Deliveries are queued from the log, not by the writes: the cursor of
//! transactions already queued is kept with the queue and moved on only
//! once their deliveries are kept, so a write acknowledged just before a
//! crash is announced after the restart, and one announced is not
//! announced again. Two nodes that queue the same transactions queue the
//! same deliveries (kept once by key); each delivery is sent by the node
//! that claims it (`domain::federation::Deliveries`).

use std::sync::Weak;
use std::time::{Duration, SystemTime};

use super::inbox::now_millis;
use super::signature;
use super::Federated;
use crate::domain::federation::{announcements_since, Delivery, Followed, Happened, Outcome};
use crate::domain::{DomainError, Slug};
use crate::import::FetchError;
use crate::views::activitypub::{self, Article, Told};
use crate::views::markdown::Memos;

/// How often the thread looks for new transactions and due deliveries.
pub const TICK: Duration = Duration::from_millis(250);
/// How long the thread waits after the queue could not be read or written.
const AFTER_ERROR: Duration = Duration::from_secs(5);
/// How long a node has a delivery it claimed before another may take it.
const LEASE_MILLIS: i64 = 60_000;
/// Deliveries claimed at a time.
const BATCH: usize = 16;
/// What the memos of the activities' Markdown may hold.
const MEMO_BYTES: u64 = 1 << 20;

/// Starts the delivery thread; it ends once the federation is dropped.
pub fn start(federated: Weak<Federated>) -> std::io::Result<()> {
    let memos = Memos::new(MEMO_BYTES);
    std::thread::Builder::new()
        .name("deliveries".into())
        .spawn(move || loop {
            let Some(federated) = federated.upgrade() else {
                return;
            };
            let done = federated
                .queue_new(&memos)
                .and_then(|_| federated.send_due());
            drop(federated);
            match done {
                Ok(_) => std::thread::sleep(TICK),
                Err(error) => {
                    // The store (or the log's database) cannot take the
                    // queue's writes now: said once a while, not each tick.
                    tracing::warn!(%error, "deliveries wait: the queue could not be read or written");
                    std::thread::sleep(AFTER_ERROR);
                }
            }
        })
        .map(drop)
}

impl Federated {
    /// Queues the deliveries of the transactions after the cursor, and
    /// moves it on. The first time, the cursor starts at the newest
    /// transaction: followers hear of what happens from then on.
    pub fn queue_new(&self, memos: &Memos) -> Result<usize, DomainError> {
        let deliveries = self.federation.deliveries();
        let snapshot = self.recipes.snapshot();
        let head = snapshot.basis().get();
        let Some(cursor) = deliveries.cursor()? else {
            deliveries.move_cursor(None, head)?;
            return Ok(0);
        };
        if cursor >= head {
            return Ok(0);
        }
        let now = now_millis();
        let mut queued = Vec::new();
        for news in announcements_since(&snapshot, cursor)? {
            let Some(author) = news.recipe.author.as_deref() else {
                continue;
            };
            let Ok(handle) = Slug::parse(author) else {
                continue;
            };
            // The cook's followers, and the recipe's.
            let mut followers = self.federation.followers(&Followed::Cook(handle))?;
            followers.extend(
                self.federation
                    .followers(&Followed::Recipe(news.recipe.slug.clone()))?,
            );
            if followers.is_empty() {
                continue;
            }
            let (id, body) = self.activity(&news, author, memos);
            let mut inboxes: Vec<&str> = followers.iter().map(|f| f.inbox.as_str()).collect();
            inboxes.sort_unstable();
            inboxes.dedup();
            queued.extend(
                inboxes
                    .into_iter()
                    .filter(|inbox| !self.is_blocked(inbox))
                    .map(|inbox| Delivery::new(inbox, author, &id, body.clone(), now)),
            );
        }
        deliveries.queue(&queued)?;
        deliveries.move_cursor(Some(cursor), head)?;
        Ok(queued.len())
    }

    /// The activity that tells of `news`: its id and document.
    fn activity(
        &self,
        news: &crate::domain::federation::Announcement,
        author: &str,
        memos: &Memos,
    ) -> (String, String) {
        let r = &news.recipe;
        let told = match news.happened {
            Happened::Retired => {
                return activitypub::deleted(
                    &self.base_url,
                    author,
                    r.slug.as_str(),
                    r.version_count,
                )
            }
            Happened::Created => Told::Created,
            Happened::Updated => Told::Updated,
        };
        let article = activitypub::article(
            &self.base_url,
            &Article::of_news(&self.base_url, memos, news),
        );
        activitypub::told(&self.base_url, author, r.slug.as_str(), article, told)
    }

    /// Sends the deliveries due now that this node claims; how many went.
    pub fn send_due(&self) -> Result<usize, DomainError> {
        let deliveries = self.federation.deliveries();
        let mut sent = 0;
        for claimed in deliveries.claim_due(now_millis(), LEASE_MILLIS, BATCH)? {
            let outcome = self.send(&claimed.delivery);
            if outcome == Outcome::Delivered {
                sent += 1;
            }
            let backoff = i64::try_from(self.retry_after.as_millis()).unwrap_or(i64::MAX);
            deliveries.settle(claimed, outcome, now_millis(), backoff)?;
        }
        Ok(sent)
    }

    /// One attempt at `delivery`.
    fn send(&self, delivery: &Delivery) -> Outcome {
        if self.is_blocked(&delivery.inbox) {
            return Outcome::Refused;
        }
        let Ok(handle) = Slug::parse(&delivery.signer) else {
            return Outcome::Refused;
        };
        let key = match self.federation.key_pair(&handle) {
            Ok(key) => key,
            Err(error) => {
                tracing::warn!(%error, "a cook's key could not be read");
                return Outcome::Failed;
            }
        };
        let key_id = activitypub::key_id(&self.base_url, handle.as_str());
        let sign = |url: &url::Url, body: Option<&[u8]>| {
            signature::sign(&key, &key_id, "POST", url, body, SystemTime::now())
        };
        match self
            .fetcher
            .post_document(&delivery.inbox, delivery.body.as_bytes(), &sign)
        {
            Ok(()) => Outcome::Delivered,
            Err(error) => {
                tracing::info!(inbox = %delivery.inbox, %error, attempts = delivery.attempts + 1, "a delivery failed");
                outcome_of(&error)
            }
        }
    }
}

/// Whether a failed delivery is worth trying again: not where the inbox
/// said no for good (a 4xx but a timeout or too many requests), nor where
/// the address is one this site never sends to.
fn outcome_of(error: &FetchError) -> Outcome {
    match error {
        FetchError::Status(408 | 429) => Outcome::Failed,
        FetchError::Status(code) if (400..500).contains(code) => Outcome::Refused,
        FetchError::BadUrl(_)
        | FetchError::NotWeb(_)
        | FetchError::Private(_)
        | FetchError::Port(_) => Outcome::Refused,
        _ => Outcome::Failed,
    }
}
