//! What makes a flush survive power loss, not only a killed process.
//!
//! sled 0.34's `flush` writes its log with `sync_file_range` on Linux,
//! which sends the bytes to the device but writes none of the file's
//! metadata and does not ask the device to empty its cache, and it never
//! syncs the blob files it writes pages of over a quarter of a segment to.
//! Its background flusher fsyncs the log about every 500 ms; no
//! acknowledgement waits for that. A process killed after a flush loses
//! nothing (the kernel has the bytes), but a power cut could lose the last
//! half second of acknowledged writes. So after each of its flushes the
//! store syncs sled's files itself, before it acknowledges anything: the
//! log (`db`), each blob file not synced before, and the blobs directory,
//! which names them. An fsync through a descriptor of its own reaches what
//! sled wrote through its own: the kernel syncs the file, not the
//! descriptor.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// sled's files in a store's directory, synced after each flush.
pub(crate) struct DurableFiles {
    log: File,
    blobs: PathBuf,
    /// Blob files synced already: a blob is written once and never
    /// changed, so each is synced once.
    synced_blobs: Mutex<HashSet<OsString>>,
}

impl DurableFiles {
    /// The files of the sled store open in `dir`.
    pub(crate) fn open(dir: &Path) -> io::Result<DurableFiles> {
        Ok(DurableFiles {
            log: File::open(dir.join("db"))?,
            blobs: dir.join("blobs"),
            synced_blobs: Mutex::new(HashSet::new()),
        })
    }

    /// Syncs the log, the blob files written since the last call, and the
    /// blobs directory if it gained any.
    pub(crate) fn sync(&self) -> io::Result<()> {
        self.log.sync_data()?;
        let mut synced = self
            .synced_blobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let listed = match std::fs::read_dir(&self.blobs) {
            Ok(listed) => listed,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        let mut present = HashSet::new();
        let mut new = false;
        for entry in listed {
            let name = entry?.file_name();
            if !synced.contains(&name) {
                match File::open(self.blobs.join(&name)) {
                    Ok(blob) => blob.sync_all()?,
                    // Collected by sled meanwhile: nothing left to keep.
                    Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
                    Err(error) => return Err(error),
                }
                new = true;
            }
            present.insert(name);
        }
        if new {
            File::open(&self.blobs)?.sync_all()?;
        }
        // Forget the blobs sled has collected.
        *synced = present;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_blob_is_synced_once_and_collected_ones_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("db"), b"log").unwrap();
        let files = DurableFiles::open(dir.path()).unwrap();
        files.sync().unwrap();
        std::fs::create_dir(dir.path().join("blobs")).unwrap();
        std::fs::write(dir.path().join("blobs/1"), b"one").unwrap();
        files.sync().unwrap();
        let synced = |files: &DurableFiles| files.synced_blobs.lock().unwrap().len();
        assert_eq!(synced(&files), 1);
        std::fs::remove_file(dir.path().join("blobs/1")).unwrap();
        std::fs::write(dir.path().join("blobs/2"), b"two").unwrap();
        files.sync().unwrap();
        assert_eq!(synced(&files), 1);
        assert!(files
            .synced_blobs
            .lock()
            .unwrap()
            .contains(&OsString::from("2")));
    }
}
