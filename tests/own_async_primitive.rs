//! An async primitive written outside the crates, through public interfaces only: a
//! count-down latch whose `wait` is a future, as a user who models their own async
//! primitive would write it. Its state sits in a model `Mutex` taken as a section (one step
//! per operation, named as the program called it), its waiters in the engine's
//! `WaitQueue`, and their wakers are woken once the state's lock is released.
//! Checked: a deadlock report names the latch and what its waiters wait to do, as it names
//! a std primitive's; a waiter that left names it no more; the reduced search runs one
//! execution per class and finds the outcomes the full search finds; schedules replay.

mod common;

use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll};

use interleave_engine::primitive::{Loc, Operation, WaitId, WaitQueue, WakeList};
use interleave_test::future;
use interleave_test::sync::{Arc, Mutex, section};
use interleave_test::{Builder, FailureKind, Reduction, StrategyKind};

use common::oracle;

/// A latch's operations: each one step of the model, to the search a lock of its state.
static COUNT_DOWN: Operation = section("latch count_down");
static WAIT: Operation = section("latch wait");
static WAIT_DROPPED: Operation = section("latch wait dropped");

/// A latch's state.
#[derive(Debug)]
struct State {
    count: usize,
    waiters: WaitQueue,
    later: WakeList,
}

/// A count-down latch: `wait` completes once `count_down` was called `count` times.
#[derive(Debug)]
struct Latch {
    state: Mutex<State>,
}

impl Latch {
    fn new(count: usize) -> Self {
        let state = State {
            count,
            waiters: WaitQueue::new("pass"),
            later: WakeList::new(),
        };
        Latch {
            state: Mutex::named(state, "Latch", None),
        }
    }

    /// Runs `f` on the state for the program's operation `what` at `loc`, then wakes and
    /// drops the wakers it left, with the state's lock released.
    fn with<R>(&self, loc: Loc, what: &'static Operation, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self.state.lock_section_at(loc, what);
        let result = f(&mut state);
        let later = state.later.take();
        drop(state);
        later.run();
        result
    }

    #[track_caller]
    fn count_down(&self) {
        self.with(Location::caller(), &COUNT_DOWN, |st| {
            st.count = st.count.saturating_sub(1);
            if st.count == 0 {
                st.waiters.wake_all(&mut st.later);
            }
        });
    }

    #[track_caller]
    fn wait(&self) -> Wait<'_> {
        Wait {
            latch: self,
            id: None,
            loc: Location::caller(),
        }
    }
}

/// The future of [`Latch::wait`].
struct Wait<'a> {
    latch: &'a Latch,
    id: Option<WaitId>,
    loc: Loc,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let me = &mut *self;
        let id = &mut me.id;
        me.latch.with(me.loc, &WAIT, |st| {
            if st.count == 0 {
                if let Some(id) = id.take() {
                    st.waiters.remove(id, &mut st.later);
                }
                return Poll::Ready(());
            }
            match *id {
                Some(waiter) if st.waiters.set_waker(waiter, cx.waker(), &mut st.later) => {}
                _ => *id = Some(st.waiters.push((), Some(cx.waker()))),
            }
            Poll::Pending
        })
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.latch.with(self.loc, &WAIT_DROPPED, |st| {
                st.waiters.remove(id, &mut st.later);
            });
        }
    }
}

/// Two tasks each wait for the other's latch before counting down their own.
fn crossed() {
    future::block_on(async {
        let (a, b) = (Arc::new(Latch::new(1)), Arc::new(Latch::new(1)));
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        let first = future::spawn(async move {
            a2.wait().await;
            b2.count_down();
        });
        b.wait().await;
        a.count_down();
        first.await.unwrap();
    });
}

/// Two tasks count down two latches, `a` then `b`; the model's thread joins them in order.
/// Every object is first used before the spawns (the oracle numbers objects by first use).
fn two_latches() {
    future::block_on(async {
        let (a, b) = (Arc::new(Latch::new(3)), Arc::new(Latch::new(3)));
        a.count_down();
        b.count_down();
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (a, b) = (Arc::clone(&a), Arc::clone(&b));
                future::spawn(async move {
                    a.count_down();
                    b.count_down();
                })
            })
            .collect();
        for handle in handles {
            handle.await.unwrap();
        }
        assert_eq!(b.state.lock().unwrap().count, 0);
    });
}

fn dfs() -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(Reduction::Dpor)
}

#[test]
fn a_deadlock_names_the_latch_and_what_its_waiters_wait_to_do() {
    let failure = dfs().check(crossed).expect_err("each waits for the other");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    let threads = failure.threads();
    assert_eq!(threads.len(), 2, "{failure}");
    for t in threads {
        let state = t.state();
        assert!(state.starts_with("waits to pass Latch #"), "{failure}");
        assert!(state.contains("(first used at tests/own_async_primitive.rs:"));
    }
    // The spawned task's thread says where its future waits; `block_on`'s lists it.
    assert!(threads[1].state().ends_with("; it waits in `latch wait`"));
    assert_eq!(
        threads[0].tasks()[0].waits_in(),
        Some("latch wait"),
        "{failure}"
    );
    let replayed = Builder::new().replay(crossed, failure.schedule());
    assert_eq!(replayed.unwrap_err(), failure);
}

#[test]
fn a_waiter_that_left_is_not_named_where_its_task_waits_next() {
    let failure = dfs()
        .check(|| {
            future::block_on(async {
                let (open, never) = (Latch::new(0), Latch::new(1));
                let left = Latch::new(1);
                let mut wait = Box::pin(left.wait());
                // Registers in `left`'s queue, then leaves it.
                let polled = futures::poll!(&mut wait);
                assert!(polled.is_pending());
                drop(wait);
                open.wait().await;
                never.wait().await; // @never
            });
        })
        .expect_err("nothing counts down `never`");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    let [main] = failure.threads() else {
        panic!("one thread: {failure}");
    };
    let state = main.state();
    assert!(state.starts_with("waits to pass Latch #"), "{failure}");
    assert!(!state.contains(" or "), "one latch only: {failure}");
    let line = common::line_of(include_str!("own_async_primitive.rs"), "// @never");
    let never = format!("(first used at tests/own_async_primitive.rs:{line}:");
    assert!(state.contains(&never), "{never}: {failure}");
}

/// The first join's wake lets the model's thread run before the second task's end, which
/// its poll of the second handle races with: the reduction keeps that race although the
/// thread could not run just before that end (`hb/race.rs`); before, it ran 7 of the 9
/// traces (those where the second task ends after the first join are the ones it missed).
/// 13 executions: 4 repeat a trace (the tasks' `Arc` drops).
#[test]
fn the_reduced_search_runs_every_class() {
    let builder = oracle::plain_dfs().spurious_wakeups(false);
    oracle::assert_complete("two latches", &builder, two_latches, 13);
    let report = dfs().check(two_latches).unwrap();
    assert!(report.exhausted, "{report}");
}

#[test]
fn the_primitive_is_written_with_no_hidden_item() {
    common::assert_written_with_public_items(include_str!("own_async_primitive.rs"));
}
