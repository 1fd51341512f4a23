//! [`Barrier`], as `tokio::sync::Barrier`.

use std::future::Future;
use std::panic::Location;
use std::task::Poll;

use super::wake_list::{self, Deferred, Section, WakeList};
use interleave_test::future::budget;

use interleave_engine::primitive::{Loc, WaitQueue};
use interleave_test::sync::Mutex;

/// Lets `n` tasks wait for each other, as `tokio::sync::Barrier`: the first `n - 1` calls
/// of [`wait`](Self::wait) wait; the `n`th wakes them all, is the generation's leader
/// ([`BarrierWaitResult::is_leader`]), and the barrier starts the next generation.
/// `Barrier::new(0)` acts as `Barrier::new(1)` (every call returns at once, as leader), as
/// Tokio (and std) do. Arriving and being released are switch points. A waiter's polls
/// after its first spend a unit of the task's cooperative budget, as Tokio's (whose
/// waiter waits in `watch::Receiver::changed`).
///
/// ```
/// use interleave_test::sync::Arc;
/// use interleave_test_tokio::{self as tokio, sync::Barrier};
///
/// interleave_test::check_async(|| async {
///     let barrier = Arc::new(Barrier::new(2));
///     let other = Arc::clone(&barrier);
///     let task = tokio::spawn(async move { other.wait().await.is_leader() });
///     let mine = barrier.wait().await.is_leader();
///     assert!(mine != task.await.unwrap(), "exactly one leader");
/// })
/// .unwrap();
/// ```
///
/// # Differences from Tokio
/// Tokio calls the leader "arbitrary"; here, as in Tokio's implementation, it is always
/// the last task to arrive.
#[derive(Debug)]
pub struct Barrier {
    n: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Tasks of the current generation that arrived; always less than `n`.
    arrived: usize,
    /// How many generations were released.
    generation: u64,
    /// The waiting tasks of the current generation.
    waiting: WaitQueue,
    /// Wakers to wake once the lock is released.
    later: WakeList,
}

impl Deferred for State {
    fn deferred(&mut self) -> WakeList {
        self.later.take()
    }
}

/// What [`Barrier::wait`] returns, as `tokio::sync::BarrierWaitResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this task released its generation (exactly one per generation: the last
    /// to arrive).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier for `n` tasks (`0` counts as `1`).
    pub fn new(n: usize) -> Barrier {
        Barrier {
            n: n.max(1),
            state: Mutex::named(
                State {
                    arrived: 0,
                    generation: 0,
                    waiting: WaitQueue::new("pass"),
                    later: WakeList::new(),
                },
                "tokio Barrier",
                None,
            ),
        }
    }

    /// Locks the state for the program's `wait` at `loc`.
    fn lock(&self, loc: Loc) -> Section<'_, State> {
        wake_list::section(
            &self.state,
            loc,
            const { &interleave_test::sync::section("tokio Barrier wait") },
        )
    }

    /// Arrives at the barrier and waits until `n` tasks have arrived in this generation.
    ///
    /// Not cancel-safe (as Tokio): a task counts as arrived from the first poll, so
    /// dropping the future afterwards still counts it, and the generation may be released
    /// with fewer tasks waiting.
    ///
    /// (An `async fn` in Tokio; here a function that returns the future, so that reports
    /// show where the program called it.)
    #[track_caller]
    pub fn wait(&self) -> impl Future<Output = BarrierWaitResult> + '_ {
        self.wait_at(Location::caller())
    }

    async fn wait_at(&self, loc: Loc) -> BarrierWaitResult {
        let generation = {
            let mut st = self.lock(loc);
            st.arrived += 1;
            if st.arrived == self.n {
                st.arrived = 0;
                st.generation += 1;
                let st = &mut *st;
                st.waiting.wake_all(&mut st.later);
                return BarrierWaitResult(true);
            }
            st.generation
        };
        // Tokio's waiter looks at the generation, then waits in a `watch` `changed`, which
        // spends a unit of the task's cooperative budget at each poll: the first look is
        // free (with no unit left it yields instead of waiting), the polls after it are
        // charged.
        let mut looked = false;
        std::future::poll_fn(|cx| {
            let first = !std::mem::replace(&mut looked, true);
            let look = |cx: &mut std::task::Context<'_>| {
                let mut st = self.lock(loc);
                if st.generation != generation {
                    return Poll::Ready(BarrierWaitResult(false));
                }
                if first && !budget::remaining() {
                    drop(st);
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                st.waiting.add(cx.waker());
                Poll::Pending
            };
            match first {
                true => look(cx),
                false => budget::charged(cx, look),
            }
        })
        .await
    }
}
