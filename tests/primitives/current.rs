//! `current`: clocks ordered by happens-before (release/acquire, join, channels, program
//! order) and not by relaxed accesses, on both substrates and reductions; ids, names and
//! labels (shown in reports); the count of decisions.

use std::sync::Mutex as StdMutex;
use std::sync::atomic::AtomicUsize as StdAtomic;

use interleave_test::current::{self, VectorClock, happens_before};
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::sync::{Arc, mpsc};
use interleave_test::{Builder, Reduction, future, thread};

use crate::common::{SUBSTRATES, dfs};

/// Every DFS configuration this file checks: both substrates, both reductions, no bound.
fn each(mut f: impl FnMut(Builder, String)) {
    for substrate in SUBSTRATES {
        for reduction in [Reduction::Dpor, Reduction::Off] {
            f(
                dfs(substrate, reduction, None),
                format!("{substrate:?}, {reduction:?}"),
            );
        }
    }
}

/// A thread takes its clock, then sets a flag with `store`; main loads the flag with
/// `load` and, if it sees it set, takes its clock and calls `judge(writer's, reader's)`;
/// under every configuration of [`each`], some executions see the flag and some do not.
fn flag_model(store: Ordering, load: Ordering, judge: fn(&VectorClock, &VectorClock)) {
    each(|builder, name| {
        let saw = StdAtomic::new(0);
        let report = builder
            .check(|| {
                let flag = Arc::new(AtomicUsize::new(0));
                let slot = std::sync::Arc::new(StdMutex::new(None));
                let (f2, s2) = (Arc::clone(&flag), std::sync::Arc::clone(&slot));
                let t = thread::spawn(move || {
                    *s2.lock().unwrap() = Some(current::clock());
                    f2.store(1, store);
                });
                if flag.load(load) == 1 {
                    let read = current::clock();
                    let written = slot.lock().unwrap().clone().expect("set before the flag");
                    judge(&written, &read);
                    saw.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                t.join().unwrap();
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        let saw = saw.into_inner();
        assert!(
            saw > 0 && (saw as u64) < report.executions,
            "{name}: {saw} of {report}"
        );
    });
}

#[test]
fn a_release_acquire_pair_orders_the_clocks() {
    flag_model(Ordering::Release, Ordering::Acquire, |written, read| {
        assert!(happens_before(written, read), "{written:?} {read:?}");
        assert!(!happens_before(read, written));
    });
}

#[test]
fn two_relaxed_accesses_leave_the_clocks_concurrent() {
    flag_model(Ordering::Relaxed, Ordering::Relaxed, |written, read| {
        assert!(!happens_before(written, read), "{written:?} {read:?}");
        assert!(!happens_before(read, written));
        assert_eq!(written.partial_cmp(read), None);
    });
}

/// A join and a channel's send and receive order clocks; two clocks of one thread are in
/// program order; a clock is tracked even in a model of `SeqCst` operations only.
#[test]
fn a_join_a_channel_and_program_order_order_the_clocks() {
    each(|builder, name| {
        builder
            .check(|| {
                let (tx, rx) = mpsc::channel();
                let t = thread::spawn(move || {
                    let before_send = current::clock();
                    tx.send(current::clock()).unwrap();
                    before_send
                });
                let first = current::clock();
                let sent = rx.recv().unwrap();
                let received = current::clock();
                assert!(!sent.is_empty(), "a clock is tracked");
                assert!(happens_before(&first, &received), "program order");
                assert!(happens_before(&sent, &received), "send, then receive");
                assert!(!happens_before(&received, &sent));
                let before_send = t.join().unwrap();
                let joined = current::clock();
                assert!(
                    happens_before(&before_send, &joined),
                    "the thread, then the join"
                );
                assert!(
                    happens_before(&before_send, &sent),
                    "program order in the thread"
                );
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}

/// Ids, names and kinds of threads and tasks; a label given and cleared.
#[test]
fn ids_names_and_labels_of_threads_and_tasks() {
    Builder::new()
        .check(|| {
            assert_eq!(
                (current::id().as_u64(), current::name()),
                (0, Some("main".into()))
            );
            let t = thread::Builder::new()
                .name("worker".into())
                .spawn(|| {
                    current::set_label("shard 3");
                    assert_eq!(current::label().as_deref(), Some("shard 3"));
                    current::clear_label();
                    (current::id().as_u64(), current::name(), current::is_task())
                })
                .unwrap();
            assert_eq!(t.join().unwrap(), (1, Some("worker".into()), false));
            let task = future::spawn(async { (current::id().as_u64(), current::is_task()) });
            let (in_task, on_main) =
                future::block_on(async { (task.await.unwrap(), current::is_task()) });
            assert_eq!((in_task, on_main), ((2, true), false));
            assert_eq!(current::label(), None);
        })
        .unwrap();
}

/// A labelled thread that fails is shown with its label, in the header and in the failure's
/// thread; the count of decisions at the panic is the failure's schedule's length.
#[test]
fn a_label_is_shown_in_reports_and_decisions_count_the_schedule() {
    for substrate in SUBSTRATES {
        let failure = dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                let n = Arc::new(AtomicUsize::new(0));
                let n2 = Arc::clone(&n);
                let t = thread::Builder::new()
                    .name("worker".into())
                    .spawn(move || {
                        current::set_label("shard 3");
                        let v = n2.load(Ordering::SeqCst);
                        n2.store(v + 1, Ordering::SeqCst);
                    })
                    .unwrap();
                let v = n.load(Ordering::SeqCst);
                n.store(v + 1, Ordering::SeqCst);
                t.join().unwrap();
                let decisions = current::decisions();
                assert!(
                    n.load(Ordering::SeqCst) == 2,
                    "lost at decision {decisions}"
                );
            })
            .unwrap_err();
        let text = failure.to_string();
        assert!(text.contains("'worker' (#1) [shard 3]"), "{text}");
        let counted: usize = failure
            .message()
            .rsplit("lost at decision ")
            .next()
            .and_then(|n| n.trim().parse().ok())
            .expect("the message ends with the count");
        assert_eq!(counted, failure.schedule().decisions().len(), "{failure}");
    }
    let failure = Builder::new()
        .check(|| {
            current::set_label("shard 3");
            panic!("labelled");
        })
        .unwrap_err();
    let thread = failure.thread().expect("the panicking thread");
    assert_eq!(thread.label(), Some("shard 3"));
    assert!(
        failure.to_string().contains("'main' (#0) [shard 3]"),
        "{failure}"
    );
}

/// Outside a model the OS thread is thread #0 of its own one-thread execution, named as
/// the OS thread is. (Before, this panicked.)
#[test]
fn current_outside_a_model_is_the_os_thread_alone() {
    assert_eq!(current::name().as_deref(), std::thread::current().name());
    assert!(!current::is_task());
    let clock = current::clock();
    assert!(!happens_before(&clock, &clock));
}
