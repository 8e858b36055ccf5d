//! The log in PostgreSQL: one row per transaction, appended in a
//! PostgreSQL commit before the store applies the transaction, durable
//! when it returns: every connection sets `synchronous_commit = on`, and
//! a node refuses a connection where it is not.
//!
//! The store is synchronous, and is called from actix's async handlers as
//! well as from threads of its own; a `block_on` inside a runtime would
//! panic. So the client runs on a thread of the log's own (`Driver`), and a
//! call hands it the query and waits for the answer as any blocking call
//! waits: one round trip per transaction, in order (each statement is
//! prepared once per connection, not parsed again on every call). A connection that broke
//! is made again on the next call, so a node whose PostgreSQL went away
//! writes again once it is back.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, Client, Error as PgError, NoTls, Row, Statement};

use super::migrations::{self, Migrated};
use forkful_store::{EntityId, KeyValue, Log, LogEntry, LogError, LogNews, News, SharedKeyspaces};

/// The store's genesis transaction: the first entry follows it.
const GENESIS_TX: i64 = 32;

/// A thread running a current-thread runtime, on which the log's
/// connections and queries run; it ends when the driver is dropped.
struct Driver {
    handle: tokio::runtime::Handle,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Driver {
    fn start(name: &str) -> Result<Driver, LogError> {
        let (handle_sent, handle) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = handle_sent.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = handle_sent.send(Ok(runtime.handle().clone()));
                // Runs every task spawned on it until the driver is dropped.
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })
            .map_err(|e| LogError::Unavailable(format!("starting the log's thread: {e}")))?;
        let handle = handle
            .recv()
            .map_err(|_| LogError::Unavailable("the log's thread did not start".into()))?
            .map_err(|e| LogError::Unavailable(format!("starting the log's runtime: {e}")))?;
        Ok(Driver {
            handle,
            _stop: stop,
        })
    }

    /// Runs `job` on the driver's thread and waits here for its outcome,
    /// at most `JOB_TIMEOUT`: a PostgreSQL that stopped answering (a
    /// network gone quiet, a paused machine) must not hold the writer, and
    /// every request waiting on it, for as long as TCP takes to give up.
    fn run<T: Send + 'static>(
        &self,
        job: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, LogError> {
        let (done, outcome) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = done.send(tokio::time::timeout(JOB_TIMEOUT, job).await);
        });
        outcome
            .recv()
            .map_err(|_| LogError::Unavailable("the log's thread stopped".into()))?
            .map_err(|_| {
                LogError::Unavailable(format!("PostgreSQL did not answer within {JOB_TIMEOUT:?}"))
            })
    }
}

/// How long one call to PostgreSQL may take, connecting included.
const JOB_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an append whose answer was lost is sent again before its
/// outcome is called unknown (see `PgLog::insert`): the writer waits that
/// long, as it would for one call that never answers.
const RESOLVE_WITHIN: Duration = JOB_TIMEOUT;

/// One send of an append: the log's answer, or none.
enum Sent {
    Answered(Result<(), LogError>),
    /// The statement went out and its answer did not come back.
    AnswerLost(String),
}

/// A new connection, its driver task spawned on the current runtime; each
/// notification it receives is sent to `notices`, when given. A connection
/// whose peer went quiet is found dead by TCP keepalives, so it is made
/// again rather than waited on.
async fn connect(url: String, notices: Option<mpsc::Sender<News>>) -> Result<Client, LogError> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| LogError::Unavailable(format!("the database address: {e}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    config.keepalives_idle(Duration::from_secs(10));
    // An append is acknowledged once PostgreSQL's COMMIT returns: that
    // must mean flushed (and, with synchronous standbys named, flushed on
    // one), whatever the server's or the role's default says. Set as a
    // start-up option, the last word on the matter: no round trip.
    let options = match config.get_options() {
        Some(given) => format!("{given} -c synchronous_commit=on"),
        None => "-c synchronous_commit=on".to_owned(),
    };
    config.options(&options);
    let (client, mut connection) = config.connect(NoTls).await.map_err(unavailable)?;
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(notice))) => {
                    if let Some(notices) = &notices {
                        // The trigger sends the row's `t`.
                        let news = notice.payload().parse().map_or(News::Appended, News::UpTo);
                        if notices.send(news).is_err() {
                            return;
                        }
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    tracing::warn!(%error, "the connection to the log's PostgreSQL ended");
                    return;
                }
                None => return,
            }
        }
    });
    Ok(client)
}

/// Appends a run of entries, each following the one before it, in one
/// statement and so one commit: all of them or none. The first must follow
/// `$7`, an entry the log has (or genesis, `$8`), and only while a copy
/// fills the log if it is the copy's (`$9`). The primary key on `t` and
/// the unique `prev` are the fence: they refuse the run when another
/// node's entry follows `$7` already.
const APPEND: &str = "INSERT INTO forkful_log (t, prev, next_id, instant, datoms, sum)
     SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],
                          $5::bytea[], $6::bytea[])
     WHERE ($7::bigint = $8::bigint
            OR EXISTS (SELECT 1 FROM forkful_log WHERE t = $7::bigint))
       AND (SELECT copying FROM forkful_log_identity) = $9";

/// A live connection, and the statements prepared on it. Each query is
/// prepared once per connection: tokio-postgres prepares a statement given
/// as text again on every call, a second round trip for every query (half
/// of a node's calls to PostgreSQL, seen in its statement log).
#[derive(Clone)]
struct Connection {
    client: Arc<Client>,
    statements: Arc<Mutex<HashMap<&'static str, Statement>>>,
}

impl Connection {
    fn new(client: Client) -> Connection {
        Connection {
            client: Arc::new(client),
            statements: Arc::default(),
        }
    }

    async fn statement(&self, sql: &'static str) -> Result<Statement, tokio_postgres::Error> {
        let known = self
            .statements
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(sql)
            .cloned();
        if let Some(statement) = known {
            return Ok(statement);
        }
        let statement = self.client.prepare(sql).await?;
        self.statements
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(sql, statement.clone());
        Ok(statement)
    }

    async fn execute(&self, sql: &'static str, params: &[&Param]) -> Result<u64, PgError> {
        let statement = self.statement(sql).await?;
        self.client.execute(&statement, params).await
    }

    async fn query(&self, sql: &'static str, params: &[&Param]) -> Result<Vec<Row>, PgError> {
        let statement = self.statement(sql).await?;
        self.client.query(&statement, params).await
    }

    async fn query_one(&self, sql: &'static str, params: &[&Param]) -> Result<Row, PgError> {
        let statement = self.statement(sql).await?;
        self.client.query_one(&statement, params).await
    }

    async fn query_opt(
        &self,
        sql: &'static str,
        params: &[&Param],
    ) -> Result<Option<Row>, PgError> {
        let statement = self.statement(sql).await?;
        self.client.query_opt(&statement, params).await
    }
}

type Param = dyn tokio_postgres::types::ToSql + Sync;

pub struct PgLog {
    url: String,
    driver: Driver,
    /// The live connection, if any. Held only to read or replace it, never
    /// over a call: a connect that waits on a quiet network must not stop
    /// every other caller (a page's session read) at this lock.
    connection: Arc<Mutex<Option<Connection>>>,
    /// Whether PostgreSQL is known out of reach, and the probe that finds
    /// it back.
    reach: Arc<Reach>,
    identity: String,
}

/// PostgreSQL out of reach, known: once a call could not reach it (no
/// connection, or no answer in time), every call fails at once, with no
/// network wait, until a probe on the log's own thread (twice a second)
/// connects and is answered again. So a stopped or stalled PostgreSQL
/// costs the callers who meet it first one `JOB_TIMEOUT` at most, and the
/// rest nothing: they are answered "out of reach" as a circuit breaker
/// answers.
#[derive(Default)]
struct Reach {
    /// Why it is out of reach, and since when; `None`: reachable.
    down: Mutex<Option<(std::time::Instant, String)>>,
}

impl Reach {
    fn down(&self) -> Option<(std::time::Instant, String)> {
        self.down
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Marks it out of reach for `why`; true if it was reachable until now
    /// (the caller starts the probe).
    fn fell(&self, why: &str) -> bool {
        let mut down = self
            .down
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if down.is_some() {
            return false;
        }
        *down = Some((std::time::Instant::now(), why.to_owned()));
        true
    }

    fn back(&self) {
        *self
            .down
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

/// How often the probe tries to reach a PostgreSQL known out of reach.
const PROBE_EVERY: Duration = Duration::from_millis(500);

impl PgLog {
    /// Connects to the database at `url` (`postgres://user@host/db`),
    /// brings its tables up to this build's, and reads the log's identity.
    pub fn connect(url: &str) -> Result<PgLog, LogError> {
        let driver = Driver::start("forkful-log")?;
        let owned = url.to_owned();
        let (client, identity) = driver.run(async move {
            let mut client = connect(owned, None).await?;
            let migrated = migrations::migrate(&mut client)
                .await
                .map_err(unavailable)?;
            if let Migrated::Newer { version } = migrated {
                return Err(LogError::Mismatch(format!(
                    "the database was migrated by a newer forkful (step {version}); this build knows fewer steps: run the newer build"
                )));
            }
            // A pooler between may drop start-up options: the setting is
            // checked, not assumed.
            let durability = client
                .query_one("SHOW synchronous_commit", &[])
                .await
                .map_err(unavailable)?
                .get::<_, String>(0);
            if durability != "on" {
                return Err(LogError::Mismatch(format!(
                    "PostgreSQL's synchronous_commit is {durability:?} on the log's connection, though forkful asks for \"on\" when it connects (a connection pooler between may drop it): a write it acknowledged could be lost in a crash or a failover, so no node starts on it"
                )));
            }
            let row = client
                .query_one("SELECT id FROM forkful_log_identity", &[])
                .await
                .map_err(unavailable)?;
            let identity = row.get::<_, String>(0);
            Ok::<_, LogError>((Connection::new(client), identity))
        })??;
        Ok(PgLog {
            url: url.to_owned(),
            driver,
            connection: Arc::new(Mutex::new(Some(client))),
            reach: Arc::default(),
            identity,
        })
    }

    /// Refuses at once while PostgreSQL is known out of reach.
    fn refuse_if_out_of_reach(&self) -> Result<(), LogError> {
        match self.reach.down() {
            None => Ok(()),
            Some((since, why)) => Err(LogError::Unavailable(format!(
                "PostgreSQL has been out of reach for {}s ({why}); asked again twice a second",
                since.elapsed().as_secs()
            ))),
        }
    }

    /// Marks PostgreSQL out of reach, for `why`, and starts the probe that
    /// finds it back, unless it was marked already.
    fn lost(&self, why: &str) {
        *self
            .connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        if !self.reach.fell(why) {
            return;
        }
        tracing::warn!(
            why,
            "PostgreSQL is out of reach: refusing writes until a probe reaches it"
        );
        let (url, reach, connection) = (
            self.url.clone(),
            self.reach.clone(),
            self.connection.clone(),
        );
        self.driver.handle.spawn(async move {
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                let probe = async {
                    let client = connect(url.clone(), None).await?;
                    client.simple_query("SELECT 1").await.map_err(unavailable)?;
                    Ok::<_, LogError>(client)
                };
                match tokio::time::timeout(JOB_TIMEOUT, probe).await {
                    Ok(Ok(client)) => {
                        *connection
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner) =
                            Some(Connection::new(client));
                        reach.back();
                        tracing::info!("PostgreSQL answers again: taking writes");
                        return;
                    }
                    Ok(Err(error)) => tracing::debug!(%error, "PostgreSQL still out of reach"),
                    Err(_) => tracing::debug!("PostgreSQL still does not answer"),
                }
            }
        });
    }

    /// `run`, for a call that may be slow by its nature (a catch-up's
    /// batch of up to 64 MiB, a whole keyspace's scan): one that times out
    /// leaves its connection to be made again, but does not mark
    /// PostgreSQL out of reach, which would refuse every call on the node
    /// for a read that was only long. A broken connection still does.
    fn run_bulk<T: Send + 'static>(
        &self,
        job: impl Future<Output = Result<T, tokio_postgres::Error>> + Send + 'static,
    ) -> Result<Result<T, tokio_postgres::Error>, LogError> {
        let outcome = self.driver.run(job);
        match &outcome {
            Err(LogError::Unavailable(_)) => {
                *self
                    .connection
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
            }
            Ok(Err(e)) if e.as_db_error().is_none() => self.lost(&described(e)),
            _ => {}
        }
        outcome
    }

    /// `Driver::run` for a query on the connection: one that timed out
    /// leaves the connection to be made again, since what it was waiting
    /// on may never come.
    fn run<T: Send + 'static>(
        &self,
        job: impl Future<Output = Result<T, tokio_postgres::Error>> + Send + 'static,
    ) -> Result<Result<T, tokio_postgres::Error>, LogError> {
        let outcome = self.driver.run(job);
        // A statement prepared before the tables changed (a newer build
        // migrated them) fails until prepared again, on a new connection.
        let stale =
            matches!(&outcome, Ok(Err(e)) if e.code() == Some(&SqlState::FEATURE_NOT_SUPPORTED));
        match &outcome {
            // No answer in time, or the connection broke: out of reach.
            Err(LogError::Unavailable(why)) => self.lost(why),
            Ok(Err(e)) if e.as_db_error().is_none() => self.lost(&described(e)),
            _ if stale => {
                *self
                    .connection
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
            }
            _ => {}
        }
        outcome
    }

    /// Appends `entries`, the first after its `prev` and each after the
    /// one before, in one commit: by a node, only while no copy fills the
    /// log; by the copy (`copied`), only while it does.
    ///
    /// An append whose answer was lost (the connection broke, or the server
    /// went quiet, after the statement was sent) may or may not have
    /// committed. It is sent again on a new connection until the log
    /// answers, for at most `RESOLVE_WITHIN`: the first row is either there
    /// with the first entry's sum (the first send committed, all of it:
    /// done), there with
    /// another's (another node's won: `Moved`), or not there (this send
    /// puts it there). A first send still running on a half-dead
    /// connection cannot slip past the second: the second's insert waits
    /// on the unique index for the first's outcome. Only when the log stays
    /// out of reach for all that time is the outcome `Unknown`.
    fn insert(&self, entries: &[LogEntry], copied: bool) -> Result<(), LogError> {
        let Some(first) = entries.first() else {
            return Ok(());
        };
        // Encoded once, sent as often as it takes.
        let mut columns = Columns::default();
        for entry in entries {
            columns.push(entry)?;
        }
        let append = Append {
            first,
            columns: Arc::new(columns),
            copied,
        };
        let client = self.connection()?;
        let mut lost = match self.send_insert(client, &append)? {
            Sent::Answered(answer) => return answer,
            Sent::AnswerLost(why) => why,
        };
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(50);
        while started.elapsed() < RESOLVE_WITHIN {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
            let Ok(client) = self.connection() else {
                continue;
            };
            match self.send_insert(client, &append) {
                Ok(Sent::Answered(answer)) => return answer,
                Ok(Sent::AnswerLost(why)) => lost = why,
                Err(LogError::Unavailable(why)) => lost = why,
                Err(other) => return Err(other),
            }
        }
        Err(LogError::Unknown(lost))
    }

    /// Sends the append once on `client`; see `insert`.
    fn send_insert(&self, client: Connection, append: &Append) -> Result<Sent, LogError> {
        let (first, copied) = (append.first, append.copied);
        let (prev, count) = (id(first.prev)?, append.columns.t.len() as u64);
        let (sent, columns) = (client.clone(), append.columns.clone());
        let inserted = match self.run(async move {
            let c = &columns;
            sent.execute(
                APPEND,
                &[
                    &c.t,
                    &c.prev,
                    &c.next_id,
                    &c.instant,
                    &c.datoms,
                    &c.sum,
                    &prev,
                    &GENESIS_TX,
                    &copied,
                ],
            )
            .await
        }) {
            Ok(inserted) => inserted,
            // No answer in time: the statement may have been carried out.
            Err(LogError::Unavailable(why)) => return Ok(Sent::AnswerLost(why)),
            Err(other) => return Err(other),
        };
        let answer = match inserted {
            Ok(n) if n == count => Ok(()),
            Ok(_) if !copied && self.copying()? => Err(LogError::Mismatch(
                "a store is being copied into the log (forkful log push): no node writes to it until the copy is done".into(),
            )),
            Ok(_) => Err(LogError::Mismatch(format!(
                "the log has no transaction {}, which this node's store applied",
                first.prev
            ))),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                // Another node's entry, or this one's from a send whose
                // answer was lost: the sum tells.
                match self.sum_after(&client, prev) {
                    Ok(sum) if sum.as_deref() == Some(&first.sum[..]) => Ok(()),
                    Ok(_) => Err(LogError::Moved { prev: first.prev }),
                    // Whose it is stays to be asked.
                    Err(LogError::Unavailable(why)) => return Ok(Sent::AnswerLost(why)),
                    Err(other) => Err(other),
                }
            }
            // The server's own word: the statement was refused, not carried out.
            Err(e) if e.as_db_error().is_some() => Err(unavailable(e)),
            // The connection broke with the statement sent.
            Err(e) => return Ok(Sent::AnswerLost(described(&e))),
        };
        Ok(Sent::Answered(answer))
    }

    /// The sum of the entry that follows `prev`, if the log has one.
    fn sum_after(&self, client: &Connection, prev: i64) -> Result<Option<Vec<u8>>, LogError> {
        let client = client.clone();
        let row = self
            .run(async move {
                client
                    .query_opt("SELECT sum FROM forkful_log WHERE prev = $1", &[&prev])
                    .await
            })?
            .map_err(unavailable)?;
        Ok(row.map(|row| row.get(0)))
    }

    /// The connection, made again if it broke; at once an error while
    /// PostgreSQL is known out of reach. The lock is not held while
    /// connecting: two callers may both connect, and the second's is kept.
    fn connection(&self) -> Result<Connection, LogError> {
        self.refuse_if_out_of_reach()?;
        let held = self
            .connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(connection) = held.filter(|c| !c.client.is_closed()) {
            return Ok(connection);
        }
        let url = self.url.clone();
        let connection = self
            .driver
            .run(async move { connect(url, None).await.map(Connection::new) })
            .and_then(|made| made)
            .inspect_err(|error| self.lost(&error.to_string()))?;
        *self
            .connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(connection.clone());
        Ok(connection)
    }
}

impl Log for PgLog {
    fn identity(&self) -> &str {
        &self.identity
    }

    fn append(&self, entries: &[LogEntry]) -> Result<(), LogError> {
        self.insert(entries, false)
    }

    fn append_copied(&self, entry: &LogEntry) -> Result<(), LogError> {
        self.insert(std::slice::from_ref(entry), true)
    }

    fn begin_copy(&self) -> Result<(), LogError> {
        let client = self.connection()?;
        let began = self
            .run(async move {
                client
                    .execute(
                        "UPDATE forkful_log_identity SET copying = true
                         WHERE NOT copying AND NOT EXISTS (SELECT 1 FROM forkful_log)",
                        &[],
                    )
                    .await
            })?
            .map_err(unavailable)?;
        match began {
            1 => Ok(()),
            _ => Err(LogError::Mismatch(
                "the log has entries already, or another copy is filling it: a store is copied only into an empty log".into(),
            )),
        }
    }

    fn end_copy(&self) -> Result<(), LogError> {
        let client = self.connection()?;
        self.run(async move {
            client
                .execute("UPDATE forkful_log_identity SET copying = false", &[])
                .await
        })?
        .map_err(unavailable)?;
        Ok(())
    }

    fn copying(&self) -> Result<bool, LogError> {
        let client = self.connection()?;
        let row = self
            .run(async move {
                client
                    .query_one("SELECT copying FROM forkful_log_identity", &[])
                    .await
            })?
            .map_err(unavailable)?;
        Ok(row.get(0))
    }

    fn entries_after(&self, t: EntityId, limit: usize) -> Result<Vec<LogEntry>, LogError> {
        let client = self.connection()?;
        let (after, limit, budget) = (id(t)?, limit as i64, CATCH_UP_BYTES);
        // At most `limit` rows, and no more bytes of datoms than `budget`
        // past the first row: a row may hold a bulk load's 32 MiB, and a
        // node catching up holds the writer while it applies them.
        let rows = self
            .run_bulk(async move {
                client
                    .query(
                        "SELECT t, prev, next_id, instant, datoms, sum FROM (
                             SELECT t, prev, next_id, instant, datoms, sum,
                                 sum(length(datoms)) OVER (ORDER BY t) - length(datoms)
                                     AS before
                             FROM forkful_log WHERE t > $1 ORDER BY t LIMIT $2
                         ) AS next WHERE before < $3 ORDER BY t",
                        &[&after, &limit, &budget],
                    )
                    .await
            })?
            .map_err(unavailable)?;
        rows.iter()
            .map(|row| {
                let number = |i: usize| entity(row.get::<_, i64>(i));
                Ok(LogEntry::decode(
                    number(0)?,
                    number(1)?,
                    number(2)?,
                    row.get(3),
                    row.get(4),
                    row.get(5),
                )?)
            })
            .collect()
    }

    fn sum_at(&self, t: EntityId) -> Result<Option<[u8; 32]>, LogError> {
        let client = self.connection()?;
        let at = id(t)?;
        let row = self
            .run(async move {
                client
                    .query_opt("SELECT sum FROM forkful_log WHERE t = $1", &[&at])
                    .await
            })?
            .map_err(unavailable)?;
        row.map(|row| {
            let sum: &[u8] = row.get(0);
            sum.try_into()
                .map_err(|_| LogError::Mismatch(format!("the log's sum at {t} is not 32 bytes")))
        })
        .transpose()
    }

    fn position(&self, t: EntityId) -> Result<(EntityId, u64), LogError> {
        let client = self.connection()?;
        let after = id(t)?;
        // Both on the primary key: the newest row, and the rows after `t`.
        let row = self
            .run(async move {
                client
                    .query_one(
                        "SELECT (SELECT coalesce(max(t), $1::bigint) FROM forkful_log),
                                (SELECT count(*) FROM forkful_log WHERE t > $2::bigint)",
                        &[&GENESIS_TX, &after],
                    )
                    .await
            })?
            .map_err(unavailable)?;
        Ok((entity(row.get(0))?, entity(row.get(1))?))
    }

    fn listen(&self) -> Result<Box<dyn LogNews>, LogError> {
        // The listener's own connection: its failures are the follower's
        // (health reports them), not a reason to refuse every call (a
        // server at its connection limit refuses this one and not others).
        Ok(Box::new(PgNews::start(&self.url)?))
    }

    fn keyspaces(&self) -> &dyn SharedKeyspaces {
        self
    }

    fn out_of_reach(&self) -> Option<(std::time::Instant, String)> {
        self.reach.down()
    }
}

/// The keyspaces in `forkful_keyspace`, each write one statement, so all
/// or none of it, and durable when it returns.
impl SharedKeyspaces for PgLog {
    fn get_many(&self, space: &str, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, LogError> {
        let client = self.connection()?;
        let space = space.to_owned();
        let wanted: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        let rows = self
            .run(async move {
                client
                    .query(
                        "SELECT key, value FROM forkful_keyspace
                         WHERE space = $1 AND key = ANY($2::bytea[])",
                        &[&space, &wanted],
                    )
                    .await
            })?
            .map_err(unavailable)?;
        let found: HashMap<Vec<u8>, Vec<u8>> =
            rows.iter().map(|row| (row.get(0), row.get(1))).collect();
        Ok(keys.iter().map(|key| found.get(*key).cloned()).collect())
    }

    fn put(&self, space: &str, entries: &[KeyValue]) -> Result<(), LogError> {
        let client = self.connection()?;
        let space = space.to_owned();
        let (keys, values): (Vec<Vec<u8>>, Vec<Vec<u8>>) = entries.iter().cloned().unzip();
        self.run(async move {
            client
                .execute(
                    "INSERT INTO forkful_keyspace (space, key, value)
                         SELECT $1, k, v FROM unnest($2::bytea[], $3::bytea[]) AS e(k, v)
                         ON CONFLICT (space, key) DO UPDATE SET value = EXCLUDED.value",
                    &[&space, &keys, &values],
                )
                .await
        })?
        .map_err(unavailable)?;
        Ok(())
    }

    fn swap(
        &self,
        space: &str,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, LogError> {
        let client = self.connection()?;
        let (space, key) = (space.to_owned(), key.to_vec());
        let (old, new) = (old.map(<[u8]>::to_vec), new.map(<[u8]>::to_vec));
        let changed = self
            .run(async move {
                match (&old, &new) {
                    (None, None) => {
                        let row = client
                            .query_one(
                                "SELECT NOT EXISTS (SELECT 1 FROM forkful_keyspace
                                 WHERE space = $1 AND key = $2)",
                                &[&space, &key],
                            )
                            .await?;
                        Ok(u64::from(row.get::<_, bool>(0)))
                    }
                    (None, Some(new)) => {
                        client
                            .execute(
                                "INSERT INTO forkful_keyspace (space, key, value)
                                 VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                                &[&space, &key, new],
                            )
                            .await
                    }
                    (Some(old), Some(new)) => {
                        client
                            .execute(
                                "UPDATE forkful_keyspace SET value = $4
                                 WHERE space = $1 AND key = $2 AND value = $3",
                                &[&space, &key, old, new],
                            )
                            .await
                    }
                    (Some(old), None) => {
                        client
                            .execute(
                                "DELETE FROM forkful_keyspace
                                 WHERE space = $1 AND key = $2 AND value = $3",
                                &[&space, &key, old],
                            )
                            .await
                    }
                }
            })?
            .map_err(unavailable)?;
        Ok(changed == 1)
    }

    fn remove(&self, space: &str, keys: &[Vec<u8>]) -> Result<usize, LogError> {
        let client = self.connection()?;
        let (space, keys) = (space.to_owned(), keys.to_vec());
        let removed = self
            .run(async move {
                client
                    .execute(
                        "DELETE FROM forkful_keyspace WHERE space = $1 AND key = ANY($2::bytea[])",
                        &[&space, &keys],
                    )
                    .await
            })?
            .map_err(unavailable)?;
        Ok(removed as usize)
    }

    fn scan(&self, space: &str, prefix: &[u8]) -> Result<Vec<KeyValue>, LogError> {
        let client = self.connection()?;
        let (space, end) = (space.to_owned(), prefix_end(prefix));
        let prefix = prefix.to_vec();
        let rows = self
            .run_bulk(async move {
                // bytea compares as bytes, as sled's keys do: a prefix is
                // the range from it to the first key past every key it
                // starts (none for a prefix of 0xFF bytes alone).
                client
                    .query(
                        "SELECT key, value FROM forkful_keyspace
                         WHERE space = $1 AND key >= $2 AND ($3::bytea IS NULL OR key < $3)
                         ORDER BY key",
                        &[&space, &prefix, &end],
                    )
                    .await
            })?
            .map_err(unavailable)?;
        Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
    }

    fn scan_range(
        &self,
        space: &str,
        start: &[u8],
        end: &[u8],
        most: usize,
    ) -> Result<Vec<KeyValue>, LogError> {
        let client = self.connection()?;
        let (space, start, end) = (space.to_owned(), start.to_vec(), end.to_vec());
        let most = i64::try_from(most).unwrap_or(i64::MAX);
        let rows = self
            .run_bulk(async move {
                // The primary key (space, key) gives these in order, and
                // stops at `most`: a read of what is wanted.
                client
                    .query(
                        "SELECT key, value FROM forkful_keyspace
                         WHERE space = $1 AND key >= $2 AND key < $3
                         ORDER BY key LIMIT $4",
                        &[&space, &start, &end, &most],
                    )
                    .await
            })?
            .map_err(unavailable)?;
        Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
    }
}

/// News of the log from PostgreSQL: a connection of its own that LISTENs
/// on `forkful_log` (the rows' trigger NOTIFYs it when a row commits), run
/// on a driver thread of its own, which hands each notice over.
struct PgNews {
    /// Kept for the connection: dropping them ends the LISTEN.
    _driver: Driver,
    _client: Client,
    notices: mpsc::Receiver<News>,
}

impl PgNews {
    fn start(url: &str) -> Result<PgNews, LogError> {
        let driver = Driver::start("forkful-log-news")?;
        let (sent, notices) = mpsc::channel();
        let url = url.to_owned();
        let client = driver.run(async move {
            let client = connect(url, Some(sent)).await?;
            client
                .batch_execute("LISTEN forkful_log")
                .await
                .map_err(unavailable)?;
            Ok::<_, LogError>(client)
        })??;
        Ok(PgNews {
            _driver: driver,
            _client: client,
            notices,
        })
    }
}

impl LogNews for PgNews {
    fn wait(&mut self, within: Duration) -> Result<News, LogError> {
        match self.notices.recv_timeout(within) {
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(News::Quiet),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(LogError::Unavailable(
                "the connection that listened for the log's news ended".into(),
            )),
            Ok(first) => {
                // One catch-up covers every notice so far: up to the
                // newest, unless one did not say how far.
                let mut news = first;
                while let Ok(next) = self.notices.try_recv() {
                    news = match (news, next) {
                        (News::UpTo(a), News::UpTo(b)) => News::UpTo(a.max(b)),
                        _ => News::Appended,
                    };
                }
                Ok(news)
            }
        }
    }
}

/// The bytes of datoms a catch-up reads at a time, past its first row.
const CATCH_UP_BYTES: i64 = 64 << 20;

/// The smallest key greater than every key starting with `prefix`; none
/// when every byte of it is 0xFF (or it is empty).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// One append, as `insert` sends it (again, if an answer is lost).
struct Append<'a> {
    /// The first entry: what it follows, and its sum, tell whose the row
    /// after `prev` is.
    first: &'a LogEntry,
    columns: Arc<Columns>,
    copied: bool,
}

/// A run of entries as the append's columns, one array each.
#[derive(Default)]
struct Columns {
    t: Vec<i64>,
    prev: Vec<i64>,
    next_id: Vec<i64>,
    instant: Vec<i64>,
    datoms: Vec<Vec<u8>>,
    sum: Vec<Vec<u8>>,
}

impl Columns {
    fn push(&mut self, entry: &LogEntry) -> Result<(), LogError> {
        self.t.push(id(entry.t)?);
        self.prev.push(id(entry.prev)?);
        self.next_id.push(id(entry.next_id)?);
        self.instant.push(entry.instant);
        self.datoms.push(entry.encoded_datoms());
        self.sum.push(entry.sum.to_vec());
        Ok(())
    }
}

/// An entity id as PostgreSQL's `bigint`.
fn id(t: EntityId) -> Result<i64, LogError> {
    i64::try_from(t).map_err(|_| LogError::Mismatch(format!("{t} is past a bigint")))
}

fn entity(n: i64) -> Result<EntityId, LogError> {
    EntityId::try_from(n).map_err(|_| LogError::Mismatch(format!("the log holds a t of {n}")))
}

/// A PostgreSQL failure as the store sees it, with the server's words.
fn unavailable(error: tokio_postgres::Error) -> LogError {
    LogError::Unavailable(described(&error))
}

/// What went wrong with a call, in the server's words where it gave any.
fn described(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(error) {
            Some(cause) => format!("{error}: {cause}"),
            None => error.to_string(),
        },
    }
}
