//! The tables forkful keeps in PostgreSQL, made by numbered steps. A node
//! applies the steps the database lacks when it connects, under an advisory
//! lock so that nodes starting together apply each once, and refuses a
//! database a newer build has migrated past what it knows.

use tokio_postgres::Client;

/// Each step: its number and its SQL. Steps are only ever added.
const STEPS: &[(i32, &str)] = &[
    (
        1,
        "
    -- One row: the log's identity, fixed when the log is made. A store
    -- that followed one log refuses every other.
    CREATE TABLE forkful_log_identity (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        id text NOT NULL
    );
    INSERT INTO forkful_log_identity (id) VALUES (gen_random_uuid()::text);
    -- One row per transaction. `prev` is the transaction it was decided
    -- after: unique, so of two nodes that decided on the same value only
    -- one appends (the fence). The datoms are in the store's own encoding;
    -- `sum` chains each row to the one before (store::LogEntry).
    CREATE TABLE forkful_log (
        t bigint PRIMARY KEY,
        prev bigint NOT NULL UNIQUE,
        next_id bigint NOT NULL,
        instant bigint NOT NULL,
        datoms bytea NOT NULL,
        sum bytea NOT NULL,
        CHECK (prev < t AND t < next_id)
    );
    ",
    ),
    (
        2,
        "
    -- Nodes LISTEN on forkful_log for news of a row, sent when the row's
    -- transaction commits (and only then), whichever node appended it.
    CREATE FUNCTION forkful_log_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('forkful_log', NEW.t::text);
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER forkful_log_notify AFTER INSERT ON forkful_log
        FOR EACH ROW EXECUTE FUNCTION forkful_log_notify();
    ",
    ),
    (
        3,
        "
    -- The keyspaces of the stores that follow the log, shared by every
    -- node: what must not be history (password hashes, sessions) and the
    -- pictures. Keys compare as bytes, as sled's do.
    CREATE TABLE forkful_keyspace (
        space text NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (space, key)
    );
    ",
    ),
    (
        4,
        "
    -- Set while `log push` fills the log: no node attaches or appends.
    ALTER TABLE forkful_log_identity ADD COLUMN copying boolean NOT NULL DEFAULT false;
    ",
    ),
];

/// Any lock number will do, as long as it is forkful's alone.
/// ("forkful" in ASCII.)
const MIGRATION_LOCK: i64 = 0x0066_6f72_6b66_756c;

/// What `migrate` found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Migrated {
    /// The database has every step this build knows (now).
    Current,
    /// A newer build has migrated it past this one's steps: it is left as
    /// it is, and this build must not use it.
    Newer { version: i32 },
}

/// Applies the steps `client`'s database lacks, in one transaction.
pub(crate) async fn migrate(client: &mut Client) -> Result<Migrated, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS forkful_migrations (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await?;
    let done: Vec<i32> = tx
        .query("SELECT version FROM forkful_migrations", &[])
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    let known = STEPS.iter().map(|(version, _)| *version).max().unwrap_or(0);
    if let Some(&version) = done.iter().filter(|&&v| v > known).max() {
        return Ok(Migrated::Newer { version });
    }
    for (version, sql) in STEPS {
        if done.contains(version) {
            continue;
        }
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO forkful_migrations (version) VALUES ($1)",
            &[version],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Migrated::Current)
}
