//! The log in PostgreSQL: one row per transaction, appended in a
//! PostgreSQL commit (durable when it returns, with the server's default
//! `synchronous_commit`) before the store applies the transaction.
//!
//! The store is synchronous and calls the log from its single writer, so
//! the client is driven on a small current-thread runtime of the log's own
//! rather than on the server's: one round trip per transaction, in order.
//! A connection that broke is made again on the next call, so a node whose
//! PostgreSQL went away writes again once it is back.

use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls};

use super::migrations::{self, Migrated};
use crate::store::{EntityId, Log, LogEntry, LogError};

/// The store's genesis transaction: the first entry follows it.
const GENESIS_TX: i64 = 32;

pub struct PgLog {
    url: String,
    runtime: Runtime,
    client: Mutex<Option<Arc<Client>>>,
    identity: String,
}

impl PgLog {
    /// Connects to the database at `url` (`postgres://user@host/db`),
    /// brings its tables up to this build's, and reads the log's identity.
    pub fn connect(url: &str) -> Result<PgLog, LogError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| LogError::Unavailable(format!("starting the log's runtime: {e}")))?;
        let mut log = PgLog {
            url: url.to_owned(),
            runtime,
            client: Mutex::new(None),
            identity: String::new(),
        };
        let mut client = log.runtime.block_on(log.open())?;
        let migrated = log
            .runtime
            .block_on(migrations::migrate(&mut client))
            .map_err(unavailable)?;
        if let Migrated::Newer { version } = migrated {
            return Err(LogError::Mismatch(format!(
                "the database was migrated by a newer forkful (step {version}); this build knows fewer steps: run the newer build"
            )));
        }
        let row = log
            .runtime
            .block_on(client.query_one("SELECT id FROM forkful_log_identity", &[]))
            .map_err(unavailable)?;
        log.identity = row.get(0);
        *log.lock_client() = Some(Arc::new(client));
        Ok(log)
    }

    /// A new connection, its driver spawned on the log's runtime (it runs
    /// whenever a call blocks on the runtime, which is whenever one waits).
    async fn open(&self) -> Result<Client, LogError> {
        let (client, connection) = tokio_postgres::connect(&self.url, NoTls)
            .await
            .map_err(unavailable)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::warn!(%error, "the connection to the log's PostgreSQL ended");
            }
        });
        Ok(client)
    }

    fn lock_client(&self) -> std::sync::MutexGuard<'_, Option<Arc<Client>>> {
        self.client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The connection, made again if it broke.
    fn client(&self) -> Result<Arc<Client>, LogError> {
        let mut held = self.lock_client();
        if let Some(client) = held.as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        let client = Arc::new(self.runtime.block_on(self.open())?);
        *held = Some(client.clone());
        Ok(client)
    }
}

impl Log for PgLog {
    fn identity(&self) -> &str {
        &self.identity
    }

    fn append(&self, entry: &LogEntry) -> Result<(), LogError> {
        let client = self.client()?;
        let (t, prev) = (id(entry.t)?, id(entry.prev)?);
        // Only after an entry the log has (or genesis): a node whose store
        // is not on this log cannot leave an entry hanging off nothing.
        let inserted = self.runtime.block_on(client.execute(
            "INSERT INTO forkful_log (t, prev, next_id, instant, datoms, sum)
             SELECT $1::bigint, $2::bigint, $3::bigint, $4::bigint, $5::bytea, $6::bytea
             WHERE $2::bigint = $7::bigint
                OR EXISTS (SELECT 1 FROM forkful_log WHERE t = $2::bigint)",
            &[
                &t,
                &prev,
                &id(entry.next_id)?,
                &entry.instant,
                &entry.encoded_datoms(),
                &&entry.sum[..],
                &GENESIS_TX,
            ],
        ));
        match inserted {
            Ok(1) => Ok(()),
            Ok(_) => Err(LogError::Mismatch(format!(
                "the log has no transaction {}, which this node's store applied",
                entry.prev
            ))),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                Err(LogError::Moved { prev: entry.prev })
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    fn entries_after(&self, t: EntityId, limit: usize) -> Result<Vec<LogEntry>, LogError> {
        let client = self.client()?;
        let rows = self
            .runtime
            .block_on(client.query(
                "SELECT t, prev, next_id, instant, datoms, sum FROM forkful_log
                 WHERE t > $1 ORDER BY t LIMIT $2",
                &[&id(t)?, &(limit as i64)],
            ))
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
        let client = self.client()?;
        let row = self
            .runtime
            .block_on(client.query_opt("SELECT sum FROM forkful_log WHERE t = $1", &[&id(t)?]))
            .map_err(unavailable)?;
        row.map(|row| {
            let sum: &[u8] = row.get(0);
            sum.try_into()
                .map_err(|_| LogError::Mismatch(format!("the log's sum at {t} is not 32 bytes")))
        })
        .transpose()
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
    match error.as_db_error() {
        Some(db) => LogError::Unavailable(format!("{} ({})", db.message(), db.code().code())),
        None => LogError::Unavailable(match std::error::Error::source(&error) {
            Some(cause) => format!("{error}: {cause}"),
            None => error.to_string(),
        }),
    }
}
