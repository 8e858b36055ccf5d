//! Cooks' accounts: sign up, log in, sessions, passwords.
//!
//! A cook is an entity in the store (`:user/handle`, `:user/name`), so their
//! recipes and versions point at them. Secrets are not history: password
//! hashes (Argon2id, in PHC strings) and sessions live in keyspaces beside
//! the datoms (`Store::keyspace`), so a changed password or an ended
//! session is really gone.
//!
//! A session is a random 256-bit token given to the browser; the store keeps
//! only its BLAKE2b hash, with the cook, an expiry and the cook's session
//! generation. "Log out everywhere" (and a password change) moves the
//! generation on, which ends every session at once in one durable write.
//!
//! Every decision is made on the latest value: a handle is claimed by
//! creating the cook entity in a transaction function that refuses an
//! existing handle; only its winner then sets the password.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use blake2::{Blake2b, Digest};

use super::ids::Instant;
pub use super::session_memo::Check;
use super::session_memo::{SessionMemo, KEEP_WHILE_UNREACHABLE};
use super::slug::Slug;
use super::{hex, Attempt, DomainError, Recipes};
use crate::store::{self, EntityMap, EntityRef, Keyspace, Transaction, Value};

/// How long a node believes a session it checked in the log's database
/// before checking it again: how long a logout on another node may take to
/// reach it (`session_memo`).
pub const SESSION_RECHECK: std::time::Duration = super::session_memo::RECHECK_AFTER;
/// How long a session lasts after logging in.
pub const SESSION_DAYS: i64 = 30;
/// How often a server sweeps sessions that can never work again.
pub const SESSION_SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(3_600);
/// Passwords shorter than this are refused.
pub const MIN_PASSWORD: usize = 10;
/// Passwords longer than this are refused (hashing is paid per byte).
pub const MAX_PASSWORD: usize = 1_024;
/// A display name longer than this is refused.
pub const MAX_NAME: usize = 100;

/// A cook, as a session or a login names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cook {
    pub handle: Slug,
    pub name: String,
}

/// A new session: the token for the cookie (never stored), and its expiry.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub token: String,
    pub expires: Instant,
}

/// What can go wrong with an account, in words for the person.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// Sign-up with a handle someone has (a cook, or an author of the seed).
    #[error("the handle {0} is taken")]
    HandleTaken(String),
    /// A wrong handle or password: the same words for both, so the answer
    /// does not tell whether a handle exists.
    #[error("that handle and password do not match an account")]
    BadCredentials,
    /// A field that cannot be: a short password, an empty name.
    #[error("{field}: {why}")]
    Invalid { field: &'static str, why: String },
    /// The account was disabled by an administrator.
    #[error("the account {0} is disabled")]
    Disabled(String),
    /// No account has the handle (for administrators' commands).
    #[error("there is no account {0}")]
    NoSuchAccount(String),
    /// A sign-up's form sent again, whose first send made the account
    /// (`Accounts::sign_up_once`; never leaves it).
    #[error("this sign-up was made already")]
    SentAgain,
    #[error(transparent)]
    Domain(#[from] DomainError),
}

/// The store's errors reach the person as the domain's.
macro_rules! from_store {
    ($($error:ty),*) => {$(
        impl From<$error> for AccountError {
            fn from(error: $error) -> AccountError {
                AccountError::Domain(error.into())
            }
        }
    )*};
}

from_store!(crate::store::StorageError, crate::store::TransactError);

/// The domain's handle on cooks' accounts.
#[derive(Clone)]
pub struct Accounts {
    recipes: Recipes,
    /// `password/<handle>`: a `PasswordRecord`; `disabled/<handle>`: present
    /// if disabled; `generation/<handle>`: the cook's session generation.
    secrets: Keyspace,
    /// `<token hash>`: `<handle> <expiry millis> <generation>`.
    sessions: Keyspace,
    hasher: Argon2<'static>,
    /// A hash of a random password, checked against when a handle has no
    /// account, so that the answer takes as long as for a wrong password.
    dummy: std::sync::Arc<String>,
    /// Sessions as this node last found them (see `session_memo`), when
    /// they are kept in the log's database; a node's own store is read
    /// each time, as it costs no round trip and is never out of reach.
    memo: Option<std::sync::Arc<SessionMemo>>,
}

/// A cook's name as typed, as one line: control characters (NUL,
/// escape), which every page, feed and signed activity would otherwise
/// carry raw, dropped; a line break or a tab, a space; runs of spaces, one;
/// none about it. Tidied rather than refused, as a recipe's title is: a
/// name of nothing else is then empty, and refused as empty.
fn name_as_shown(typed: &str) -> String {
    let visible: String = typed
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .collect();
    visible.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn key(kind: &str, handle: &Slug) -> Vec<u8> {
    format!("{kind}/{handle}").into_bytes()
}

/// A password as stored under `password/<handle>`: its hash, and the
/// attempt of the password-change form that set it, if one did, so that
/// the form sent again (its answer lost) is told the change was made
/// rather than that its current password is wrong. Stored as the PHC
/// string, then a space and the attempt: a PHC string has no space, so a
/// value stored before attempts were kept reads as it always did.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PasswordRecord {
    /// The PHC string (Argon2id).
    hash: String,
    /// The `Attempt` of the form that set it (never the password: an
    /// attempt is a fast hash, which would make it easy to guess).
    set_by: Option<String>,
}

impl PasswordRecord {
    fn parse(stored: &[u8]) -> PasswordRecord {
        let text = String::from_utf8_lossy(stored);
        match text.split_once(' ') {
            Some((hash, set_by)) => PasswordRecord {
                hash: hash.to_owned(),
                set_by: Some(set_by.to_owned()),
            },
            None => PasswordRecord {
                hash: text.into_owned(),
                set_by: None,
            },
        }
    }

    fn encode(&self) -> Vec<u8> {
        match &self.set_by {
            Some(attempt) => format!("{} {attempt}", self.hash).into_bytes(),
            None => self.hash.clone().into_bytes(),
        }
    }

    /// Whether `attempt` set this password: compared before any hashing,
    /// so that only the form's own sender gets to test a password here.
    fn was_set_by(&self, attempt: Option<&Attempt>) -> bool {
        match (&self.set_by, attempt) {
            (Some(set_by), Some(attempt)) => tokens_match(set_by, attempt.as_str()),
            _ => false,
        }
    }
}

/// The hash a session is stored under: a fast hash is enough for a token
/// of 256 random bits.
fn token_hash(token: &str) -> Vec<u8> {
    Blake2b::<blake2::digest::consts::U32>::digest(token.as_bytes()).to_vec()
}

/// A fresh random 256-bit token, in hex: for sessions, and for the forms of
/// a visitor who has none.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    hex(&bytes)
}

/// The form token of a session: derived from its token, so it needs no
/// storage, and ends with it; knowing it tells nothing of the session's.
pub fn form_token(session: &str) -> String {
    let mut hasher = Blake2b::<blake2::digest::consts::U32>::new();
    hasher.update(b"forkful form token\0");
    hasher.update(session.as_bytes());
    hex(&hasher.finalize())
}

/// `token` (hex) masked with a fresh random pad of its length: the pad,
/// then the token XOR the pad, both in hex. Each call gives other text for
/// the same token, so a compressed page that carries it leaks nothing of
/// it through its length (BREACH); `unmask_token` gives the token back.
pub fn mask_token(token: &str) -> String {
    let token = unhex(token).unwrap_or_default();
    let mut pad = vec![0u8; token.len()];
    OsRng.fill_bytes(&mut pad);
    let masked: Vec<u8> = pad.iter().zip(&token).map(|(p, t)| p ^ t).collect();
    hex(&pad) + &hex(&masked)
}

/// The token a `mask_token` text carries, or `None` for text that is not
/// one.
pub fn unmask_token(masked: &str) -> Option<String> {
    let bytes = unhex(masked)?;
    if bytes.is_empty() || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let (pad, masked) = bytes.split_at(bytes.len() / 2);
    let token: Vec<u8> = pad.iter().zip(masked).map(|(p, m)| p ^ m).collect();
    Some(hex(&token))
}

/// The bytes of lower- or upper-case hex text.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Whether two tokens are equal, in time that does not depend on where
/// they differ.
pub fn tokens_match(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

impl Accounts {
    pub fn open(recipes: &Recipes) -> Result<Accounts, AccountError> {
        let store = recipes.store();
        let sessions = store.keyspace("sessions")?;
        let mut accounts = Accounts {
            recipes: recipes.clone(),
            secrets: store.keyspace("secrets")?,
            // Sessions kept elsewhere are remembered here for a while.
            memo: sessions.kept_elsewhere().then(Default::default),
            sessions,
            hasher: Argon2::default(),
            dummy: Default::default(),
        };
        let mut random = [0u8; 32];
        OsRng.fill_bytes(&mut random);
        accounts.dummy = std::sync::Arc::new(accounts.hash(&hex(&random))?);
        Ok(accounts)
    }

    /// These accounts checking a session kept in the log's database again
    /// once `after` has passed since they last did (`session_memo`'s
    /// `RECHECK_AFTER` unless told).
    pub fn with_session_recheck(mut self, after: std::time::Duration) -> Accounts {
        if let Some(memo) = &mut self.memo {
            if let Some(memo) = std::sync::Arc::get_mut(memo) {
                memo.recheck_after = after;
            }
        }
        self
    }

    /// Checks a password's length before it is hashed.
    fn check_password(password: &str) -> Result<(), AccountError> {
        let chars = password.chars().count();
        if chars < MIN_PASSWORD || password.len() > MAX_PASSWORD {
            return Err(AccountError::Invalid {
                field: "password",
                why: format!("a password is {MIN_PASSWORD} to {MAX_PASSWORD} characters long"),
            });
        }
        Ok(())
    }

    fn hash(&self, password: &str) -> Result<String, AccountError> {
        let salt = SaltString::generate(&mut OsRng);
        self.hasher
            .hash_password(password.as_bytes(), &salt)
            .map(|hash| hash.to_string())
            .map_err(|e| AccountError::Invalid {
                field: "password",
                why: e.to_string(),
            })
    }

    /// The record of `password` hashed, set by `attempt`.
    fn record(
        &self,
        password: &str,
        attempt: Option<&Attempt>,
    ) -> Result<PasswordRecord, AccountError> {
        Ok(PasswordRecord {
            hash: self.hash(password)?,
            set_by: attempt.map(|attempt| attempt.as_str().to_owned()),
        })
    }

    /// The cook's password as stored, if they have one.
    fn password(&self, handle: &Slug) -> Result<Option<PasswordRecord>, AccountError> {
        let stored = self.secrets.get(&key("password", handle))?;
        Ok(stored.as_deref().map(PasswordRecord::parse))
    }

    /// Opens an account: the handle must be free (no cook and no author
    /// has it), the name said, the password long enough.
    pub fn sign_up(&self, handle: &Slug, name: &str, password: &str) -> Result<Cook, AccountError> {
        self.sign_up_once(handle, name, password, None)
    }

    /// `sign_up`, from a form sent as `attempt`: sent again (its first
    /// answer lost, a 503 that could not tell), the handle its first send
    /// claimed is not "taken" but this form's, and the sign-up goes on as
    /// the first would have (the password set again, to what the form says).
    pub fn sign_up_once(
        &self,
        handle: &Slug,
        name: &str,
        password: &str,
        attempt: Option<&Attempt>,
    ) -> Result<Cook, AccountError> {
        let name = name_as_shown(name);
        if name.is_empty() || name.chars().count() > MAX_NAME {
            return Err(AccountError::Invalid {
                field: "name",
                why: format!("a name is 1 to {MAX_NAME} characters"),
            });
        }
        Accounts::check_password(password)?;
        let record = self.record(password, None)?;
        // The cook entity claims the handle, decided in the writer: of two
        // sign-ups with one handle, one creates it and the other is told
        // the handle is taken. Then the password is set. A crash between
        // the two leaves a cook with no password, whom `user passwd` gives
        // one; the other order left a password with no cook, which neither
        // a sign-up nor an administrator could take back.
        match self.create_cook(handle, &name, attempt) {
            Ok(()) => {}
            // The form's first send made the account. Its answer was lost
            // before or after the password was set: set it now if it was
            // not; if it was, the form must say that very password (else
            // anyone holding an old copy of the form, its password left
            // out, could set one of their own): the sign-up is then done.
            Err(AccountError::SentAgain) => {
                if self.is_disabled(handle)? {
                    return Err(AccountError::Disabled(handle.to_string()));
                }
                if let Some(stored) = self.password(handle)? {
                    if !self.verify(password, &stored.hash) {
                        return Err(AccountError::HandleTaken(handle.to_string()));
                    }
                    return Ok(Cook {
                        handle: handle.clone(),
                        name,
                    });
                }
            }
            Err(error) => return Err(error),
        }
        self.secrets
            .insert(&key("password", handle), &record.encode())?;
        Ok(Cook {
            handle: handle.clone(),
            name,
        })
    }

    /// The cook entity, created inside the writer unless the handle exists;
    /// `SentAgain` if `attempt` created it.
    fn create_cook(
        &self,
        handle: &Slug,
        name: &str,
        attempt: Option<&Attempt>,
    ) -> Result<(), AccountError> {
        let attrs = self.recipes.attrs();
        let attr = attrs.user_handle;
        let attempt_attr = attrs.tx_attempt;
        let result = self
            .recipes
            .store()
            .transact_with(|db| -> Result<_, AccountError> {
                if let Some(attempt) = attempt {
                    let recorded = db.entity_with(attempt_attr, &Value::from(attempt.as_str()))?;
                    if recorded.is_some() {
                        return Err(AccountError::SentAgain);
                    }
                }
                if db
                    .entity_with(attr, &Value::from(handle.as_str()))?
                    .is_some()
                {
                    return Err(AccountError::HandleTaken(handle.to_string()));
                }
                let mut tx = Transaction::new();
                tx.map(
                    EntityMap::new(EntityRef::temp("cook"))
                        .with(attrs.user_handle, handle.as_str())
                        .with(attrs.user_name, name),
                );
                tx.tx_attr(attrs.tx_note, format!("{handle} signed up"));
                if let Some(attempt) = attempt {
                    tx.tx_attr(attrs.tx_attempt, attempt.as_str());
                }
                Ok((tx, ()))
            });
        result.map(|_| ())
    }

    /// Logs in: a new session for the cook, if the password matches. An
    /// unknown handle costs the same hashing as a wrong password.
    pub fn log_in(
        &self,
        handle: &Slug,
        password: &str,
    ) -> Result<(Cook, NewSession), AccountError> {
        if password.len() > MAX_PASSWORD {
            return Err(AccountError::BadCredentials);
        }
        // The generation is read before the password: a password change
        // that lands after this read moves the generation on, so a session
        // made with the old password dies with the others. Read after, it
        // could be the new generation, and the old password's session
        // would outlive the change.
        let generation = self.generation(handle)?;
        let stored = self.password(handle)?;
        let matches = match &stored {
            Some(stored) => self.verify(password, &stored.hash),
            None => {
                // Spend what a real check spends, then refuse.
                let _ = self.verify(password, &self.dummy);
                false
            }
        };
        // Said whatever the password, so that the answer never confirms a
        // guess at a disabled account's password.
        if stored.is_some() && self.secrets.get(&key("disabled", handle))?.is_some() {
            return Err(AccountError::Disabled(handle.to_string()));
        }
        if !matches {
            return Err(AccountError::BadCredentials);
        }
        let cook = self.cook(handle)?;
        let session = self.session_at(handle, generation)?;
        Ok((cook, session))
    }

    fn verify(&self, password: &str, hash: &str) -> bool {
        let Ok(parsed) = PasswordHash::new(hash) else {
            return false;
        };
        self.hasher
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    }

    fn generation(&self, handle: &Slug) -> Result<u64, AccountError> {
        Ok(parse_generation(
            self.secrets.get(&key("generation", handle))?,
        ))
    }

    /// A new session for the cook with `handle`, whose password the caller
    /// has just checked or set (a sign-up: no second Argon2 run).
    pub fn new_session(&self, handle: &Slug) -> Result<NewSession, AccountError> {
        self.session_at(handle, self.generation(handle)?)
    }

    /// A new session under `generation`, read before the password was
    /// checked (see `log_in`).
    fn session_at(&self, handle: &Slug, generation: u64) -> Result<NewSession, AccountError> {
        let token = new_token();
        let expires = store::now_millis() + SESSION_DAYS * 24 * 3_600_000;
        let record = format!("{handle} {expires} {generation}");
        self.sessions
            .insert(&token_hash(&token), record.as_bytes())?;
        // Known here from now on: the node that made a session honours it
        // while PostgreSQL is away, as it does one it has checked.
        if let Some(memo) = &self.memo {
            memo.keep(token_hash(&token), Some(self.cook(handle)?), expires);
        }
        Ok(NewSession {
            token,
            expires: Instant::from_millis(expires),
        })
    }

    /// The cook a session token belongs to, if it is live: not expired, not
    /// ended, the account not disabled. As this node last found it, within
    /// `RECHECK_AFTER`; and while the sessions' keyspace cannot be reached
    /// (PostgreSQL stopped or stalled), within `KEEP_WHILE_UNREACHABLE`
    /// (see `session_memo`).
    pub fn session(&self, token: &str) -> Result<Option<Cook>, AccountError> {
        if token.len() != 64 {
            return Ok(None);
        }
        let hash = token_hash(token);
        let Some(memo) = &self.memo else {
            return Ok(self.read_session(&hash)?.0);
        };
        let now = store::now_millis();
        if let Some(known) = memo.answer(&hash, memo.recheck_after, now) {
            return Ok(known);
        }
        let forgets = memo.forgets();
        match self.read_session(&hash) {
            Ok((cook, expires)) => {
                memo.keep_unless_forgotten(hash, cook.clone(), expires, forgets);
                Ok(cook)
            }
            Err(AccountError::Domain(error)) if error.is_unavailable() => memo
                .answer(&hash, KEEP_WHILE_UNREACHABLE, now)
                .ok_or(AccountError::Domain(error)),
            Err(error) => Err(error),
        }
    }

    /// The cook of session `token` as this node checked it within
    /// `RECHECK_AFTER`, if it did: an answer with no read at all. `None`
    /// when it must be read (`session`), or sessions are not kept here.
    pub fn known_session(&self, token: &str) -> Option<Option<Cook>> {
        if token.len() != 64 {
            return Some(None);
        }
        let memo = self.memo.as_ref()?;
        memo.answer(&token_hash(token), memo.recheck_after, store::now_millis())
    }

    /// The cook of session `token` as this node checked it within
    /// `KEEP_WHILE_UNREACHABLE`, if it did: what a page may be answered
    /// with while PostgreSQL is slow to check it again.
    pub fn kept_session(&self, token: &str) -> Option<Option<Cook>> {
        if token.len() != 64 {
            return Some(None);
        }
        self.memo.as_ref()?.answer(
            &token_hash(token),
            KEEP_WHILE_UNREACHABLE,
            store::now_millis(),
        )
    }

    /// Claims the one check of session `token` under way (`None` while
    /// another request checks it, or sessions are not kept here): hold it
    /// over `session`.
    pub fn claim_check(&self, token: &str) -> Option<Check> {
        self.memo.as_ref()?.claim(token_hash(token))
    }

    /// The session stored under `hash`: its cook if it is live, and when
    /// it expires.
    fn read_session(&self, hash: &[u8]) -> Result<(Option<Cook>, i64), AccountError> {
        let Some(record) = self.sessions.get(hash)? else {
            return Ok((None, i64::MAX));
        };
        match self.live_session(&record)? {
            Some((handle, expires)) => Ok((Some(self.cook(&handle)?), expires)),
            None => {
                // Gone for good: the token never works again.
                self.sessions.remove(hash)?;
                Ok((None, i64::MAX))
            }
        }
    }

    /// The handle a stored session record belongs to, if the session is
    /// live (not expired, its generation current, the account enabled),
    /// with its expiry.
    fn live_session(&self, record: &[u8]) -> Result<Option<(Slug, i64)>, AccountError> {
        let record = String::from_utf8_lossy(record);
        let mut parts = record.split(' ');
        let (Some(handle), Some(expires), Some(generation)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Ok(None);
        };
        let Ok(handle) = Slug::parse(handle) else {
            return Ok(None);
        };
        let expires: i64 = expires.parse().unwrap_or(0);
        let generation: u64 = generation.parse().unwrap_or(u64::MAX);
        if expires <= store::now_millis() {
            return Ok(None);
        }
        // Both in one read: on a site past one machine, each is a round
        // trip to PostgreSQL on every request a cook makes.
        let (current, disabled) = (key("generation", &handle), key("disabled", &handle));
        let [current, disabled] =
            <[_; 2]>::try_from(self.secrets.get_many(&[&current, &disabled])?)
                .expect("a value for each key asked");
        let live = generation == parse_generation(current) && disabled.is_none();
        Ok(live.then_some((handle, expires)))
    }

    /// Removes every session record that can never work again (expired,
    /// ended everywhere, its account disabled), in one durable write;
    /// returns how many. A session nobody presents again is otherwise kept
    /// for ever: the server sweeps them from time to time
    /// (`SESSION_SWEEP_EVERY`).
    pub fn sweep_sessions(&self) -> Result<usize, AccountError> {
        let mut dead = Vec::new();
        for entry in self.sessions.scan_prefix(b"") {
            let (hash, record) = entry?;
            if self.live_session(&record)?.is_none() {
                dead.push(hash.to_vec());
            }
        }
        Ok(self.sessions.remove_all(dead)?)
    }

    /// Ends one session.
    /// On this node at once, whether or not the sessions' keyspace can be
    /// reached: a logout refused for an outage still ends the session here.
    pub fn log_out(&self, token: &str) -> Result<(), AccountError> {
        if let Some(memo) = &self.memo {
            memo.forget(&token_hash(token));
        }
        self.sessions.remove(&token_hash(token))?;
        Ok(())
    }

    /// Ends every session of the cook, in one durable write.
    pub fn log_out_everywhere(&self, handle: &Slug) -> Result<(), AccountError> {
        if let Some(memo) = &self.memo {
            memo.forget_cook(handle.as_str());
        }
        let generation = key("generation", handle);
        loop {
            let old = self.secrets.get(&generation)?;
            let next = old
                .as_deref()
                .and_then(|v| std::str::from_utf8(v).ok()?.parse::<u64>().ok())
                .unwrap_or(0)
                + 1;
            let next = next.to_string();
            if self
                .secrets
                .compare_and_swap(&generation, old.as_deref(), Some(next.as_bytes()))?
            {
                if let Some(memo) = &self.memo {
                    memo.forget_cook(handle.as_str());
                }
                return Ok(());
            }
        }
    }

    /// Changes the cook's password, if `old` is their password now; every
    /// other session ends, and a new one is returned for this browser.
    pub fn change_password(
        &self,
        handle: &Slug,
        old: &str,
        new: &str,
    ) -> Result<NewSession, AccountError> {
        self.change_password_once(handle, old, new, None)
    }

    /// `change_password`, from a form sent as `attempt`. Sent again (its
    /// first answer lost, or a 503 that could not tell), the form finds
    /// the password its first send set, and `old` no longer matches: if
    /// the password stored was set by this very attempt and is `new`, the
    /// change is done, and what the first send may not have done is done
    /// now (every session ends, a new one for this browser).
    pub fn change_password_once(
        &self,
        handle: &Slug,
        old: &str,
        new: &str,
        attempt: Option<&Attempt>,
    ) -> Result<NewSession, AccountError> {
        Accounts::check_password(new)?;
        let key = key("password", handle);
        let stored = self
            .secrets
            .get(&key)?
            .ok_or(AccountError::BadCredentials)?;
        let now = PasswordRecord::parse(&stored);
        if self.changed_by(&now, new, attempt) {
            return self.end_sessions_for_change(handle);
        }
        if !self.verify(old, &now.hash) {
            return Err(AccountError::BadCredentials);
        }
        let record = self.record(new, attempt)?;
        // Refused if the password changed meanwhile: the old one was checked
        // against what is replaced. Unless this very form changed it (sent
        // twice at once, a double click): then it is done.
        if !self
            .secrets
            .compare_and_swap(&key, Some(&stored), Some(&record.encode()))?
        {
            return attempt.map_or(Err(AccountError::BadCredentials), |attempt| {
                self.password_change_sent_again(handle, new, attempt)
            });
        }
        self.end_sessions_for_change(handle)
    }

    /// The end of a password change whose form, sent as `attempt`, set
    /// the password stored now, `new`, and whose answer was lost: every
    /// session ends, and a new one is returned for this browser, as the
    /// first send would have answered. `BadCredentials` if this form did
    /// not set it, or set another. For a browser whose session the first
    /// send ended, which has no session to show for itself: the attempt is
    /// its proof, checked before `new` is hashed.
    pub fn password_change_sent_again(
        &self,
        handle: &Slug,
        new: &str,
        attempt: &Attempt,
    ) -> Result<NewSession, AccountError> {
        let Some(stored) = self.password(handle)? else {
            return Err(AccountError::BadCredentials);
        };
        if !self.changed_by(&stored, new, Some(attempt)) {
            return Err(AccountError::BadCredentials);
        }
        if self.is_disabled(handle)? {
            return Err(AccountError::Disabled(handle.to_string()));
        }
        self.end_sessions_for_change(handle)
    }

    /// Whether `stored` is `new` as set by the form sent as `attempt`: the
    /// attempt first, so that no one without the form's attempt gets a
    /// password tested.
    fn changed_by(&self, stored: &PasswordRecord, new: &str, attempt: Option<&Attempt>) -> bool {
        stored.was_set_by(attempt) && self.verify(new, &stored.hash)
    }

    /// What follows a password change: every session ends, and a new one
    /// is returned for the browser that made the change.
    fn end_sessions_for_change(&self, handle: &Slug) -> Result<NewSession, AccountError> {
        self.log_out_everywhere(handle)?;
        self.new_session(handle)
    }

    /// Sets a cook's password (administrators): the account must exist.
    pub fn set_password(&self, handle: &Slug, password: &str) -> Result<(), AccountError> {
        Accounts::check_password(password)?;
        self.cook(handle)?;
        let record = self.record(password, None)?;
        self.secrets
            .insert(&key("password", handle), &record.encode())?;
        self.log_out_everywhere(handle)
    }

    /// Disables (or enables again) an account; disabling ends its sessions.
    pub fn set_disabled(&self, handle: &Slug, disabled: bool) -> Result<(), AccountError> {
        self.cook(handle)?;
        let key = key("disabled", handle);
        if disabled {
            self.secrets.insert(&key, b"")?;
            self.log_out_everywhere(handle)
        } else {
            self.secrets.remove(&key)?;
            Ok(())
        }
    }

    /// Whether the account is disabled.
    pub fn is_disabled(&self, handle: &Slug) -> Result<bool, AccountError> {
        Ok(self.secrets.get(&key("disabled", handle))?.is_some())
    }

    /// The cook with `handle`, with their display name.
    pub fn cook(&self, handle: &Slug) -> Result<Cook, AccountError> {
        let snapshot = self.recipes.snapshot();
        match snapshot.cook_name(handle)? {
            Some(name) => Ok(Cook {
                handle: handle.clone(),
                name,
            }),
            None => Err(AccountError::NoSuchAccount(handle.to_string())),
        }
    }
}

/// A cook's session generation as stored (none yet: 0).
fn parse_generation(stored: Option<impl AsRef<[u8]>>) -> u64 {
    stored
        .and_then(|v| std::str::from_utf8(v.as_ref()).ok()?.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHC: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo";

    #[test]
    fn a_password_record_keeps_the_attempt_that_set_it_and_an_old_one_reads_as_it_was() {
        let attempt = Attempt::of(&[b"a form"]);
        let record = PasswordRecord {
            hash: PHC.to_owned(),
            set_by: Some(attempt.as_str().to_owned()),
        };
        assert_eq!(PasswordRecord::parse(&record.encode()), record);
        assert!(record.was_set_by(Some(&attempt)));
        assert!(!record.was_set_by(Some(&Attempt::of(&[b"another form"]))));
        assert!(!record.was_set_by(None));
        // A plain PHC string, as every record was stored before.
        let old = PasswordRecord::parse(PHC.as_bytes());
        assert_eq!((old.hash.as_str(), old.set_by.as_deref()), (PHC, None));
        assert_eq!(old.encode(), PHC.as_bytes());
        assert!(!old.was_set_by(Some(&attempt)));
    }

    #[test]
    fn a_masked_token_differs_every_time_and_unmasks_to_the_token() {
        let token = new_token();
        let (one, two) = (mask_token(&token), mask_token(&token));
        assert_ne!(one, two);
        assert_eq!(one.len(), 128);
        assert_eq!(unmask_token(&one).as_deref(), Some(token.as_str()));
        assert_eq!(unmask_token(&two).as_deref(), Some(token.as_str()));
        // The token itself, or text that is not hex, unmasks to no token.
        assert_ne!(unmask_token(&token).as_deref(), Some(token.as_str()));
        for junk in ["", "zz", "abc", "é1", &one[1..]] {
            assert!(unmask_token(junk).is_none_or(|t| t != token), "{junk:?}");
        }
    }
}
