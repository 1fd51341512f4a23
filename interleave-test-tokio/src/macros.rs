//! `select!`, `join!` and `try_join!` (from `interleave-test-macros`), and the runtime
//! support their expansions call.

pub use interleave_test_macros::{join, select, try_join};

/// What the expansions of `select!`, `join!` and `try_join!` call, by the absolute path
/// `::interleave_test_tokio::__private` (so a renamed `interleave_test` dependency is not
/// supported). Not public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use core::future::{Future, IntoFuture, poll_fn, ready};
    pub use core::option::Option;
    pub use core::pin::{Pin, pin};
    pub use core::result::Result;
    pub use core::task::{Context, Poll};

    /// Which of `k` enabled branches a `select!` polls first: a decision of the search
    /// (a `choose(k)`, reported as `select! start branch`), recorded and replayed; under
    /// DFS every start in turn. `k` is at least 2 (one branch decides nothing).
    #[track_caller]
    pub fn start(k: usize) -> usize {
        interleave_engine::primitive::data::choose_as(
            "interleave_test_tokio::select!'s start branch",
            k,
            interleave_test::DFS_CHOOSE_LIMIT,
            Some("select! start branch"),
        )
    }

    /// The branch (its index among all, in written order) a `select!` polls first, given
    /// which are enabled: the [`start`]th enabled one when two or more are, else 0.
    #[track_caller]
    pub fn start_branch(enabled: &[bool]) -> usize {
        let k = enabled.iter().filter(|&&on| on).count();
        if k < 2 {
            return 0;
        }
        let j = start(k);
        let mut on = enabled.iter().enumerate().filter(|&(_, &on)| on);
        on.nth(j).map_or(0, |(i, _)| i)
    }

    /// Polls the future in `slot`, if it has not been taken out: `None` if it has.
    pub fn poll_branch<F: Future>(
        slot: Pin<&mut Option<F>>,
        cx: &mut Context<'_>,
    ) -> Option<Poll<F::Output>> {
        slot.as_pin_mut().map(|future| future.poll(cx))
    }

    /// Polls a future of `join!` unless it finished; when it finishes, keeps its output in
    /// `out` and drops it.
    pub fn poll_join<F: Future>(
        mut slot: Pin<&mut Option<F>>,
        out: &mut Option<F::Output>,
        cx: &mut Context<'_>,
    ) {
        if let Some(Poll::Ready(value)) = poll_branch(slot.as_mut(), cx) {
            *out = Some(value);
            slot.set(None);
        }
    }

    /// Polls a future of `try_join!` unless it finished: `Err` if it failed (it is dropped
    /// then), else `Ok`, with an `Ok` output kept in `out` and the future dropped.
    pub fn poll_try_join<F, T, E>(
        mut slot: Pin<&mut Option<F>>,
        out: &mut Option<T>,
        cx: &mut Context<'_>,
    ) -> Result<(), E>
    where
        F: Future<Output = Result<T, E>>,
    {
        let Some(Poll::Ready(result)) = poll_branch(slot.as_mut(), cx) else {
            return Ok(());
        };
        slot.set(None);
        *out = Some(result?);
        Ok(())
    }

    /// The `step`th of `n` branches or futures in a round that starts at `from`.
    pub fn round(from: usize, step: usize, n: usize) -> usize {
        (from + step) % n
    }

    /// The next start of a rotating `join!`: `turn`, which moves on to the next of `n`.
    pub fn next_turn(turn: &mut usize, n: usize) -> usize {
        let from = *turn;
        *turn = (from + 1) % n;
        from
    }

    /// A finished future's output, once every future of a `join!` finished.
    #[track_caller]
    pub fn take_output<T>(out: &mut Option<T>) -> T {
        out.take()
            .expect("join!: every future finished, so each output is there once")
    }

    /// `select!` without `else` when every branch is disabled: Tokio's panic.
    #[track_caller]
    pub fn all_branches_disabled() -> ! {
        panic!("all branches are disabled and there is no else branch")
    }

    /// The arm after a `select!`'s handlers: never reached, as the value a branch's
    /// pattern matched while polling matches it again.
    #[track_caller]
    pub fn matched_before() -> ! {
        unreachable!("select!: a branch's value matched its pattern while polling, and again")
    }
}
