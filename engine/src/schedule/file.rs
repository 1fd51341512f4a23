//! Reading a schedule file as untrusted input: only a regular file, at most
//! [`Schedule::MAX_FILE_BYTES`], never blocking.
//!
//! A schedule file comes from a bug report or a cloned repository. Opening a FIFO blocks
//! until a writer comes, and a device such as `/dev/zero` or `/dev/urandom` never ends, so the
//! file type is checked before the file is opened. The path may be replaced between that
//! check and the open, so the open does not block (`O_NONBLOCK` on Unix) and the opened file
//! is checked again. Reading stops one byte after the limit, so neither a file that grows
//! nor one whose reported size is wrong (as in `/proc`) can make it read more.

use std::fs::{File, FileType, Metadata};
use std::io::Read;
use std::path::Path;

use super::{Schedule, ScheduleError};

/// The bytes of the regular file at `path` (symbolic links followed), at most
/// [`Schedule::MAX_FILE_BYTES`].
pub(super) fn read(path: &Path) -> Result<Vec<u8>, ScheduleError> {
    let io = |e: std::io::Error| ScheduleError::io(path, &e);
    check(path, &std::fs::metadata(path).map_err(io)?)?;
    let file = open(path).map_err(io)?;
    check(path, &file.metadata().map_err(io)?)?;
    let limit = Schedule::MAX_FILE_BYTES;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    let size = bytes.len() as u64;
    if size > limit {
        return Err(ScheduleError::TooLarge {
            path: path.to_owned(),
            size,
            limit,
        });
    }
    Ok(bytes)
}

/// The text of a schedule file: UTF-8, as JSON requires. Names a UTF-16 file as such (some
/// Windows editors save as "Unicode"), and says where other invalid bytes are.
pub(super) fn text(bytes: Vec<u8>) -> Result<String, ScheduleError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
            return ScheduleError::Syntax {
                line: 1,
                column: 1,
                reason: "the text is UTF-16 (it starts with a UTF-16 byte order mark); save \
                         the file as UTF-8"
                    .to_owned(),
            };
        }
        let valid = &bytes[..e.utf8_error().valid_up_to()];
        let valid = std::str::from_utf8(valid).unwrap_or_default();
        let last_line = valid.rsplit('\n').next().unwrap_or_default();
        ScheduleError::Syntax {
            line: valid.matches('\n').count() + 1,
            column: last_line.chars().count() + 1,
            reason: "invalid UTF-8; a schedule is UTF-8 text".to_owned(),
        }
    })
}

/// Refuses anything but a regular file of at most the limit.
fn check(path: &Path, meta: &Metadata) -> Result<(), ScheduleError> {
    if let Some(kind) = not_a_file(meta.file_type()) {
        return Err(ScheduleError::NotAFile {
            path: path.to_owned(),
            kind: kind.to_owned(),
        });
    }
    if meta.len() > Schedule::MAX_FILE_BYTES {
        return Err(ScheduleError::TooLarge {
            path: path.to_owned(),
            size: meta.len(),
            limit: Schedule::MAX_FILE_BYTES,
        });
    }
    Ok(())
}

/// What a file type is, unless it is a regular file.
fn not_a_file(t: FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("something else")
}

/// Opens `path` for reading without blocking on a FIFO, and without making a terminal the
/// controlling one; both only matter if the path was replaced after it was checked, and the
/// opened file is checked again.
#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<File> {
    File::open(path)
}
