//! `tests/data/schedule_v5_task_waits.json`: a schedule of [`channel_model`] as format 5
//! recorded it, when a future's wait between polls was a switch point even when it blocked
//! (format 6 decides nothing before a wait that finds no wake). Kept, never rewritten: it
//! replays with the rule it was recorded with, and its decisions do not fit format 6's.

use interleave_test::tokio::sync::mpsc;
use interleave_test::{Builder, FailureKind, Schedule, StrategyKind, future};

/// A task sends three values over a channel of one slot to `block_on`, which receives them
/// and the task's result, then panics (so that every execution fails and its schedule
/// holds every decision).
pub(crate) fn channel_model() {
    future::block_on(async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let sender = future::spawn(async move {
            for v in 0..3 {
                tx.send(v).await.unwrap();
            }
        });
        let mut got = Vec::new();
        while let Some(v) = rx.recv().await {
            got.push(v);
        }
        sender.await.unwrap();
        panic!("received {got:?}");
    });
}

/// The builder the file was recorded with (seed 3, first execution).
pub(crate) fn builder() -> Builder {
    Builder::new()
        .strategy(StrategyKind::Random)
        .seed(3)
        .iterations(1)
        .max_steps(10_000)
}

fn old_file() -> Schedule {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/schedule_v5_task_waits.json");
    Schedule::load(&path).unwrap()
}

/// The format 5 file replays decision for decision, to the same panic, of format 5 too;
/// it has decisions before waits that blocked, which format 6 does not make.
#[test]
fn a_format_5_file_with_waits_replays_with_its_own_rule() {
    let old = old_file();
    assert_eq!(old.format_version(), 5);
    let waits = old.decisions().iter().filter(|d| d.op() == "task wait");
    assert!(waits.count() >= 2, "{}", old.to_json());
    let replayed = builder().replay(channel_model, &old).unwrap_err();
    assert_eq!(replayed.kind(), FailureKind::Panic, "{replayed}");
    assert!(
        replayed.message().contains("received [0, 1, 2]"),
        "{replayed}"
    );
    assert_eq!(replayed.schedule().format_version(), 5);
    assert_eq!(replayed.schedule().decisions(), old.decisions());
}

/// Read as format 6, the same decisions no longer fit: replay reports the divergence.
#[test]
fn the_format_5_waits_do_not_fit_format_6() {
    let old = old_file();
    let as_new =
        Schedule::from_json(&old.to_json().replace("\"version\": 5", "\"version\": 6")).unwrap();
    let diverged = builder().replay(channel_model, &as_new).unwrap_err();
    assert_eq!(diverged.kind(), FailureKind::Divergence, "{diverged}");
}

/// The same run today: format 6, fewer decisions than format 5 needed.
#[test]
fn format_6_records_fewer_decisions_for_the_same_model() {
    let old = old_file();
    let new = builder().check(channel_model).unwrap_err();
    assert_eq!(new.schedule().format_version(), 6);
    let replayed = builder().replay(channel_model, new.schedule()).unwrap_err();
    assert_eq!(replayed, new);
    assert!(
        new.schedule().decisions().len() < old.decisions().len(),
        "{} decisions, {} in format 5",
        new.schedule().decisions().len(),
        old.decisions().len()
    );
}
