//! A failure's message and location survive what reaches the panic hook differently: a
//! hook the user installs between two explorations (which replaces this crate's), and a
//! `resume_unwind` payload (which skips every hook). The user's hook is chained, never
//! dropped. (Its own test binary: it replaces the process's panic hook.)

use std::sync::Arc as StdArc;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};

use interleave_test::{Builder, FailureKind, thread};

#[test]
fn user_hooks_and_resume_unwind_payloads_keep_the_message_and_location() {
    // The crate's hook is installed by the first exploration.
    Builder::new().iterations(1).check(|| {}).unwrap();
    // Then the user installs a hook of their own that does not chain to the previous one.
    let calls = StdArc::new(StdAtomicUsize::new(0));
    let seen = StdArc::clone(&calls);
    std::panic::set_hook(Box::new(move |_| {
        seen.fetch_add(1, StdOrdering::Relaxed);
    }));
    // The first model panic after that reaches only the user's hook: the message is still
    // recovered from the payload, the location is the thread's last switch point.
    let first = Builder::new()
        .iterations(1)
        .check(|| panic!("after the user's hook"))
        .expect_err("fails");
    assert_eq!(first.message(), "after the user's hook");
    assert_eq!(calls.load(StdOrdering::Relaxed), 1);
    // That missed panic makes the next exploration put the crate's hook back on top, chained
    // to the user's: the exact location again.
    let assert_line = line!() + 4;
    let again = Builder::new()
        .iterations(1)
        .check(|| {
            assert_eq!(1 + 1, 3, "with the location");
        })
        .expect_err("fails");
    assert!(again.message().contains("with the location"), "{again}");
    let location = again.location().expect("a location");
    assert_eq!((location.file(), location.line()), (file!(), assert_line));
    // Model panics are the crate's (they are not printed); every other panic still reaches
    // the user's hook.
    assert_eq!(calls.load(StdOrdering::Relaxed), 1);
    let _ = std::panic::catch_unwind(|| panic!("outside any model"));
    assert_eq!(calls.load(StdOrdering::Relaxed), 2);

    // `resume_unwind` skips every hook: the message comes from the payload, the location is
    // the thread's last switch point (its spawn here, the only one it reached).
    let spawn_line = line!() + 7;
    let failure = Builder::new()
        .seed(1)
        .iterations(5)
        .check(|| {
            let t = thread::Builder::new()
                .name("resumer".into())
                .spawn(|| std::panic::resume_unwind(Box::new("resumed without a hook")))
                .unwrap();
            let _ = t.join();
        })
        .expect_err("always fails");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.message(), "resumed without a hook");
    assert_eq!(failure.thread().unwrap().name(), Some("resumer"));
    let location = failure.location().expect("a location");
    assert_eq!(
        (location.file(), location.line()),
        (file!(), spawn_line),
        "{failure}"
    );
}
