//! Where a failure found outside a test's corpus goes: a file of its own in the temporary
//! directory, named after the failure's decisions.

use std::path::PathBuf;

use super::env;
use crate::report::Failure;
use crate::schedule::Schedule;

/// Saves the failure's schedule in `<temp dir>/interleave-test/<name>-<id>.json` (`id` from
/// its decisions, so two failures do not share a file) and says where, and how to replay it.
pub(crate) fn save_for_later(failure: &Failure, name: Option<&str>) -> String {
    let path = saved_schedule_path(name, failure.schedule());
    let saved = match failure.schedule().save(&path) {
        Ok(()) => format!(
            "the schedule is saved in {}\nto replay it: Builder::new().replay(model, \
             &Schedule::load(\"{}\")?)",
            path.display(),
            path.display()
        ),
        Err(e) => format!(
            "the schedule could not be saved ({e}); print failure.schedule().to_json() to keep it"
        ),
    };
    let seed = failure
        .seed()
        .map(|s| format!("\nto rerun the same search: {}={s}", env::SEED))
        .unwrap_or_default();
    format!("{saved}{seed}")
}

/// Where a failure's schedule goes: `<temp dir>/interleave-test/<name>-<id>.json`.
pub(crate) fn saved_schedule_path(name: Option<&str>, schedule: &Schedule) -> PathBuf {
    let name: String = name
        .unwrap_or("model")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let id = crate::corpus::schedule_id(schedule);
    std::env::temp_dir()
        .join("interleave-test")
        .join(format!("{name}-{id}.json"))
}
