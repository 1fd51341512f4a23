//! Finds the lost update in a counter incremented with a separate load and store.
//!
//! Run with `cargo run --example counter_race`. It prints the report of the failing
//! execution, replays the schedule from its JSON text to show that the replay fails the same
//! way, and shows how to replay it from a file.

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::{Builder, Schedule, thread};

/// Two threads each add one to a shared counter, but the increment is a load followed by a
/// store: if both load before either stores, one update is lost.
fn racy_counter() {
    let counter = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let counter = Arc::clone(&counter);
            thread::Builder::new()
                .name(format!("incr-{i}"))
                .spawn(move || {
                    let v = counter.load(Ordering::SeqCst);
                    counter.store(v + 1, Ordering::SeqCst);
                })
                .unwrap()
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 2, "an increment was lost");
}

fn main() {
    let builder = Builder::new()
        .name("counter_race")
        .seed(2026)
        .iterations(1000);
    let failure = match builder.check(racy_counter) {
        Ok(report) => {
            println!("no failure found: {report}");
            std::process::exit(1);
        }
        Err(failure) => failure,
    };
    println!("{failure}\n");

    let json = failure.schedule().to_json();
    let schedule = Schedule::from_json(&json).expect("a schedule reads back from its own JSON");
    let replayed = builder
        .replay(racy_counter, &schedule)
        .expect_err("the replay fails too");
    assert_eq!(
        replayed, failure,
        "the replay reproduces the failure exactly"
    );

    let path = std::env::temp_dir().join("counter_race.schedule.json");
    failure
        .schedule()
        .save(&path)
        .expect("the temp dir is writable");
    println!(
        "replayed from JSON: the same {} in thread {}.\n\
         The schedule ({} decisions) is saved in {}; to replay it:\n    \
         Builder::new().name(\"counter_race\").replay(racy_counter, &Schedule::load(path)?)",
        replayed.kind(),
        replayed
            .thread()
            .map(ToString::to_string)
            .unwrap_or_default(),
        schedule.decisions().len(),
        path.display(),
    );
}
