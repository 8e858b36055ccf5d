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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use super::inbox::now_millis;
use super::signature;
use super::Federated;
use crate::domain::federation::{
    announcements_since, offers_since, Delivery, Followed, Happened, OfferAnswered, OfferMade,
    OfferWithdrawn, Outcome,
};
use crate::domain::SuggestionState;
use crate::domain::{DomainError, RecipeId, Slug};
use crate::import::FetchError;
use crate::views::activitypub::{self, Article, Told};
use crate::views::markdown::Memos;

/// How often the thread looks for new transactions and due deliveries.
pub const TICK: Duration = Duration::from_millis(250);
/// How long the thread waits after the queue could not be read or written.
const AFTER_ERROR: Duration = Duration::from_secs(5);
/// How long a node has a delivery it claimed before another may take it:
/// past one send at its longest (10 s, twice where a site refused an RFC
/// 9421 signature and is asked the older way), so no lease runs out while its
/// node is still sending, and short, so a node that died mid-send holds
/// its delivery up for no longer.
const LEASE_MILLIS: i64 = 30_000;
/// Deliveries sent at most each tick, claimed one at a time.
const BATCH: usize = 16;
/// Ticks between the thread's forgetting of old applied activities and of
/// quiet sites' rate limits (about an hour).
const FORGET_EVERY: u64 = 3_600_000 / TICK.as_millis() as u64;
/// What the memos of the activities' Markdown may hold.
const MEMO_BYTES: u64 = 1 << 20;

/// The delivery thread, stopped by `stop` (or once the federation is
/// dropped).
pub struct Deliverer {
    stopping: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Deliverer {
    /// Stops the thread once its send in flight is settled, and waits for
    /// it: a delivery is never left claimed by a process that stopped.
    pub fn stop(self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = self.thread.join();
    }
}

/// Starts the delivery thread.
pub fn start(federated: Weak<Federated>) -> std::io::Result<Deliverer> {
    let stopping = Arc::new(AtomicBool::new(false));
    let stop = stopping.clone();
    let thread = std::thread::Builder::new()
        .name("deliveries".into())
        .spawn(move || deliver(&federated, &stop))?;
    Ok(Deliverer { stopping, thread })
}

/// The thread's loop: queue, send, now and then forget, and wait a tick.
fn deliver(federated: &Weak<Federated>, stopping: &AtomicBool) {
    let memos = Memos::new(MEMO_BYTES);
    let mut ticks: u64 = 0;
    while !stopping.load(Ordering::SeqCst) {
        let Some(federated) = federated.upgrade() else {
            return;
        };
        // Each on its own: a queue that cannot take new deliveries still
        // sends those it has.
        let queued = federated.queue_new(&memos);
        let sent = federated.send_due(stopping);
        if ticks.is_multiple_of(FORGET_EVERY) {
            federated.forget_old();
        }
        ticks += 1;
        drop(federated);
        let wait = match queued.and(sent) {
            Ok(_) => TICK,
            Err(error) => {
                // The store (or the log's database) cannot take the
                // queue's writes now: said once a while, not each tick.
                tracing::warn!(%error, "deliveries wait: the queue could not be read or written");
                AFTER_ERROR
            }
        };
        let until = std::time::Instant::now() + wait;
        while std::time::Instant::now() < until && !stopping.load(Ordering::SeqCst) {
            std::thread::sleep(TICK.min(until - std::time::Instant::now()));
        }
    }
}

impl Federated {
    /// Whether anyone is to be told of recipe `id`, asked before it is read
    /// whole: its author's followers, its own, or the site of the recipe
    /// it forked (`announcements_since`).
    ///
    /// The three are read from the latest value, not the queue's. They are
    /// written in a recipe's first transaction and never after
    /// (`new_recipe_map`, `fork_elsewhere`), so both say the same; but
    /// the queue's value is a moment behind a busy recipe's newest edit,
    /// which the current-entity index does not answer, and there each was
    /// read from every version the recipe had had: 12.6% of a server's
    /// CPU under eight cooks editing as fast as acknowledged, growing with
    /// their edits (perf of scripts/write-growth.sh,
    /// docs/journal/55-million.md).
    fn anyone_to_tell(&self, id: RecipeId) -> Result<bool, DomainError> {
        let snapshot = self.recipes.snapshot();
        if snapshot.source_inbox(id)?.is_some() {
            return Ok(true);
        }
        let mut followed = Vec::new();
        if let Some(Ok(cook)) = snapshot.author_of(id)?.as_deref().map(Slug::parse) {
            followed.push(Followed::Cook(cook));
        }
        if let Ok(recipe) = Slug::stored(&snapshot.slug_of(id)?) {
            followed.push(Followed::Recipe(recipe));
        }
        for followed in &followed {
            if self.federation.follower_count(followed)? > 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }

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
        if cursor > head {
            // The store is not the one the cursor was moved on (replaced
            // by an older copy): its transactions from here on are news.
            tracing::warn!(cursor, head, "the deliveries' cursor is past the store's newest transaction; it starts again from there");
            deliveries.move_cursor(Some(cursor), head)?;
            return Ok(0);
        }
        if cursor == head {
            return Ok(0);
        }
        let now = now_millis();
        let mut queued = Vec::new();
        let mut anyone_to_tell = |id| self.anyone_to_tell(id);
        for news in announcements_since(&snapshot, cursor, &mut anyone_to_tell)? {
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
            // And, for a fork of a recipe on another site, its author.
            let mut inboxes: Vec<&str> = followers.iter().map(|f| f.inbox.as_str()).collect();
            inboxes.extend(news.tell.as_deref());
            if inboxes.is_empty() {
                continue;
            }
            let (id, body) = self.activity(&news, author, memos);
            inboxes.sort_unstable();
            inboxes.dedup();
            queued.extend(
                inboxes
                    .into_iter()
                    .filter(|inbox| !self.is_blocked(inbox))
                    .map(|inbox| Delivery::new(inbox, author, &id, body.clone(), now)),
            );
        }
        let offers = offers_since(&snapshot, cursor)?;
        for offer in &offers.made {
            queued.extend(self.offer_delivery(offer, memos, now));
        }
        for answer in &offers.answered {
            queued.extend(self.answer_delivery(answer, now));
        }
        for undone in &offers.withdrawn {
            queued.extend(self.undo_delivery(undone, now));
        }
        deliveries.queue(&queued)?;
        deliveries.move_cursor(Some(cursor), head)?;
        Ok(queued.len())
    }

    /// The delivery of a suggestion made here to a recipe on another site,
    /// as an `Offer` from its cook.
    fn offer_delivery(&self, made: &OfferMade, memos: &Memos, now: i64) -> Option<Delivery> {
        let by = made.suggestion.by.as_deref()?;
        if self.is_blocked(&made.inbox) {
            return None;
        }
        let fork =
            activitypub::article(&self.base_url, &Article::of_recipe(&made.fork, None, memos));
        let (id, body) = activitypub::offer(
            &self.base_url,
            by,
            made.suggestion.id,
            (
                &made.to,
                made.base.get(),
                made.suggestion.base_fork_version.map(|v| v.get()),
            ),
            fork,
            &made.suggestion.message,
        );
        Some(Delivery::new(&made.inbox, by, &id, body, now))
    }

    /// The delivery of the `Undo` of an offer made from here, withdrawn by
    /// its cook.
    fn undo_delivery(&self, withdrawn: &OfferWithdrawn, now: i64) -> Option<Delivery> {
        let by = withdrawn.suggestion.by.as_deref()?;
        if self.is_blocked(&withdrawn.inbox) {
            return None;
        }
        let (id, body) = activitypub::offer_undone(&self.base_url, by, withdrawn.suggestion.id);
        Some(Delivery::new(&withdrawn.inbox, by, &id, body, now))
    }

    /// The delivery of the answer to a suggestion offered from elsewhere,
    /// from the author of the recipe it was offered to.
    fn answer_delivery(&self, answered: &OfferAnswered, now: i64) -> Option<Delivery> {
        let author = answered.to.author.as_deref()?;
        if self.is_blocked(&answered.inbox) {
            return None;
        }
        let s = &answered.suggestion;
        let closed = s.state == SuggestionState::Closed;
        let accepted = match (s.state, s.accepted_in) {
            (SuggestionState::Accepted, Some(v)) => {
                Some((v.get(), s.whole.unwrap_or(false), s.kept_own.unwrap_or(0)))
            }
            _ => None,
        };
        let (id, body) = activitypub::offer_answer(
            &self.base_url,
            author,
            &activitypub::OfferAnswer {
                offer: &answered.offer,
                slug: answered.to.slug.as_str(),
                number: s.number,
                accepted,
                closed,
                reply: s.reply.as_deref(),
            },
        );
        Some(Delivery::new(&answered.inbox, author, &id, body, now))
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

    /// Sends the deliveries due now that this node claims, one claimed at
    /// a time, until `stopping`; how many went.
    pub fn send_due(&self, stopping: &AtomicBool) -> Result<usize, DomainError> {
        let deliveries = self.federation.deliveries();
        let mut sent = 0;
        for _ in 0..BATCH {
            if stopping.load(Ordering::SeqCst) {
                break;
            }
            let Some(claimed) = deliveries.claim_due(now_millis(), LEASE_MILLIS, 1)?.pop() else {
                break;
            };
            let outcome = self.send(&claimed.delivery);
            if outcome == Outcome::Delivered {
                sent += 1;
            }
            let backoff = i64::try_from(self.retry_after.as_millis()).unwrap_or(i64::MAX);
            deliveries.settle(claimed, outcome, now_millis(), backoff)?;
        }
        Ok(sent)
    }

    /// Forgets the activities applied long enough ago that no signature
    /// could bring them again, and the rate limits of quiet sites.
    fn forget_old(&self) {
        self.forget_quiet_sites();
        let window = i64::try_from((super::signature::MAX_AGE * 2).as_millis()).unwrap_or(0);
        if let Err(error) = self.federation.forget_applied_before(now_millis() - window) {
            tracing::warn!(%error, "forgetting applied activities failed");
        }
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
        let posted = self.signed_as_its_site_takes(&delivery.inbox, |form| {
            let sign = |url: &url::Url, body: Option<&[u8]>| {
                signature::sign_in(form, &key, &key_id, "POST", url, body, SystemTime::now())
            };
            self.fetcher
                .post_document(&delivery.inbox, delivery.body.as_bytes(), &sign)
        });
        match posted {
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
        // What an inbox says when it will never take the activity; a 401
        // (it could not fetch our key just then) and the rest are retried.
        FetchError::Status(400 | 403 | 404 | 405 | 410 | 413 | 422) => Outcome::Refused,
        FetchError::BadUrl(_)
        | FetchError::NotWeb(_)
        | FetchError::Private(_)
        | FetchError::Port(_) => Outcome::Refused,
        _ => Outcome::Failed,
    }
}
