//! Stored schedules, judged by the test that stored them: every file of its regression
//! corpus before it explores, or the one `INTERLEAVE_REPLAY` names (see
//! [`Builder::revisit`] for how a verdict is reached).

use std::path::Path;

use super::{Test, how_to_replay, store, visible};
use crate::config::{Builder, Verdict};
use crate::corpus::{Content, Corpus, Entry};
use crate::protocol;
use crate::schedule::Schedule;
use crate::settings;

/// Stored schedules by verdict, for the line that sums a corpus up.
#[derive(Default)]
struct Tally {
    fixed: usize,
    diverged: usize,
    skipped: usize,
}

/// Judges every stored schedule of the test: one whose failure still happens fails the test
/// now, and so do another failure found from it and a file that cannot be read. What is not
/// a regular file in the corpus, or a link out of it, is skipped unread with a note. The
/// notes, and a line that sums the corpus up, show even when the test passes.
#[track_caller]
pub(super) fn judge_corpus<F: Fn() + Sync>(
    builder: &Builder,
    model: &F,
    corpus: &Corpus,
    test: &Test,
) {
    let entries = corpus
        .entries()
        .unwrap_or_else(|e| panic!("interleave-test: cannot read the regression corpus: {e}"));
    if entries.is_empty() {
        return;
    }
    let total = entries.len();
    let mut tally = Tally::default();
    for Entry { path, content } in entries {
        let Some(schedule) = readable(&path, content) else {
            tally.skipped += 1;
            continue;
        };
        match builder.revisit(model, &schedule) {
            Verdict::Fixed(explored) => {
                tally.fixed += 1;
                visible(&format!(
                    "interleave-test: fixed: {}: {} no longer happens ({explored}). It stays as \
                     a regression test; delete the file to drop it.",
                    path.display(),
                    recorded(&schedule)
                ));
            }
            Verdict::Diverged(why) => {
                tally.diverged += 1;
                visible(&format!(
                    "interleave-test: diverged: {}: {why}. It no longer tells anything about \
                     this test and does not fail the run; delete it if the test changed on \
                     purpose.",
                    path.display()
                ));
            }
            verdict => fail(verdict, &path, &schedule, test, "was stored before, in"),
        }
    }
    let skipped = match tally.skipped {
        0 => String::new(),
        n => format!(", {n} skipped"),
    };
    visible(&format!(
        "interleave-test: {}: {total} stored schedule{}: 0 still fail, {} fixed, {} \
         diverged{skipped}",
        test.name,
        if total == 1 { "" } else { "s" },
        tally.fixed,
        tally.diverged,
    ));
}

/// The schedule in a corpus file; `None` (after a note) for what is skipped. A file that
/// cannot be read fails the test.
fn readable(path: &Path, content: Content) -> Option<Schedule> {
    match content {
        Content::Schedule(schedule) => Some(schedule),
        Content::Unreadable(e) => {
            let shown = path.display().to_string();
            let what = e.to_string();
            let what = what.strip_prefix(&format!("{shown}: ")).unwrap_or(&what);
            let todo = if e.is_old_format() {
                "delete it and run the test again: its search stores the failure anew, in the \
                 current format, if it still happens"
            } else {
                "fix the file or delete it"
            };
            panic!("interleave-test: the stored schedule {shown} cannot be read: {what}\n{todo}")
        }
        Content::Skipped(reason) => {
            visible(&format!(
                "interleave-test: skipped in the regression corpus: {reason}; it does not fail \
                 the run. Remove it from the corpus."
            ));
            None
        }
    }
}

/// Fails the test with a verdict that is a failure; `was` says where the file came from
/// ("was stored before, in").
#[track_caller]
fn fail(verdict: Verdict, path: &Path, schedule: &Schedule, test: &Test, was: &str) -> ! {
    match verdict {
        Verdict::StillFails(f) => panic!(
            "{f}\n\nthis failure {was} {}, and still happens.\n{}",
            path.display(),
            how_to_replay(path, test)
        ),
        Verdict::FailsOtherwise(f) => panic!(
            "{f}\n\nthis failure was found exploring on from the stored schedule {} (whose own \
             failure, {}, did not happen).\n{}",
            path.display(),
            recorded(schedule),
            store(&f, test)
        ),
        Verdict::Fixed(_) | Verdict::Diverged(_) => unreachable!("not a failure"),
    }
}

/// The failure a schedule recorded, for a person.
fn recorded(schedule: &Schedule) -> String {
    match schedule.failure() {
        Some(signature) => format!("its failure ({signature})"),
        None => "its failure".to_owned(),
    }
}

/// The `INTERLEAVE_REPLAY` mode: judges one file, prints its verdict (as a protocol line
/// when `cargo interleave` asks, see [`protocol`]), and fails the test if the failure
/// happens.
#[track_caller]
pub(super) fn judge_one<F: Fn() + Sync>(
    builder: &Builder,
    model: &F,
    path: &Path,
    schedule: &Schedule,
    test: &Test,
) {
    let verdict = builder.revisit(model, schedule);
    let mut fields = protocol::json::Object::new();
    let mut put = |k: &str, v: String| fields.insert(k.to_owned(), v.into());
    put("event", "verdict".into());
    put("file", path.display().to_string());
    put("test", test.name.clone());
    let human = match &verdict {
        Verdict::StillFails(f) | Verdict::FailsOtherwise(f) => {
            let still = matches!(verdict, Verdict::StillFails(_));
            put(
                "verdict",
                if still {
                    "still-fails"
                } else {
                    "fails-otherwise"
                }
                .into(),
            );
            put("kind", f.kind().to_string());
            put(
                "message",
                f.message().lines().next().unwrap_or("").to_owned(),
            );
            None
        }
        Verdict::Fixed(explored) => {
            put("verdict", "fixed".into());
            put("detail", explored.to_string());
            Some(format!(
                "fixed: {}: {} no longer happens ({explored})",
                path.display(),
                recorded(schedule)
            ))
        }
        Verdict::Diverged(why) => {
            put("verdict", "diverged".into());
            put("reason", why.clone());
            Some(format!("diverged: {}: {why}", path.display()))
        }
    };
    speak(fields);
    match human {
        Some(line) => visible(&format!("interleave-test: {line}")),
        None => fail(verdict, path, schedule, test, "was recorded in"),
    }
}

/// Prints a protocol line if `cargo interleave` asked for them (`INTERLEAVE_PROTOCOL`).
pub(super) fn speak(fields: protocol::json::Object) {
    if settings::protocol_requested() {
        println!("{}", protocol::line(fields));
    }
}

/// The verdict line for a file that cannot be read.
pub(super) fn invalid(path: &Path, reason: &str) {
    let mut fields = protocol::json::Object::new();
    fields.insert("event".into(), "verdict".into());
    fields.insert("file".into(), path.display().to_string().into());
    fields.insert("verdict".into(), "invalid".into());
    fields.insert("reason".into(), reason.into());
    speak(fields);
}
