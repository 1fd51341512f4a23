//! Decisions of data rather than of threads: a value of `choose` (one of `n`) and a draw of
//! the model's random number generator (32 random bits). Neither is a switch point: the
//! calling thread decides where it is, and no other thread runs in between. And what a
//! thread can ask of itself (`current`): its label, the decisions so far, its clock.
//!
//! A depth-first search explores every value of a decision, so it refuses what it cannot
//! exhaust (a choice among more than its limit, any random draw): a `Misuse` that says what
//! to write instead, never a silent partial proof.

use super::execution::{ExecState, Phase, Unwinding};
use super::{Loc, Tid, atomics, misuse, sched, with_state};
use crate::op::PickKind;

/// How many values a random draw is one of: 32 bits, so that every value is an option
/// below the count (a 64-bit draw is two of them).
const DRAW_OPTIONS: usize = 1 << 32;

/// What becomes of a decision of data.
enum Data {
    /// The strategy makes it.
    Decide,
    /// It is this value, with no decision.
    Fixed(usize),
    /// It cannot be made: a `Misuse` that says why.
    Refuse(String),
}

/// One of `0..n`, chosen by the strategy for the calling thread (`PickKind::Choose`).
/// `n` 0, or more than `dfs_limit` under a depth-first search, is a `Misuse`.
#[track_caller]
pub fn choose(api: &str, n: usize, dfs_limit: usize) -> usize {
    choose_as(api, n, dfs_limit, None)
}

/// [`choose`], reported as `what` (the schedule records a `choose`).
#[track_caller]
pub fn choose_as(api: &str, n: usize, dfs_limit: usize, what: Option<&'static str>) -> usize {
    let how = |st: &mut ExecState, _: Tid| match n {
        0 => Data::Refuse("there is no value to choose from: pass n of at least 1".to_owned()),
        _ if n > dfs_limit && exhaustive(st) => Data::Refuse(format!(
            "a depth-first search explores every value of a choice, and at most {dfs_limit} \
             (interleave_test::DFS_CHOOSE_LIMIT); this one has {n}: narrow it (choose among \
             classes of values), or search with the random or PCT strategy"
        )),
        _ => Data::Decide,
    };
    let loc = std::panic::Location::caller();
    let call = format!("{api}({n})");
    decide_data((api, &call), (PickKind::Choose, what), n, how, loc)
}

/// 32 random bits for the calling thread, drawn by the strategy (`PickKind::Random`).
/// Under a depth-first search, a `Misuse`: it cannot explore 2^32 values per draw. While
/// the calling thread unwinds (a destructor run by a panic), 0 with no decision, under
/// every strategy alike (so replay repeats it): the panic, not the draw, is the failure.
#[track_caller]
pub fn draw(api: &str) -> u32 {
    let how = |st: &mut ExecState, me: Tid| {
        if st.threads[me].life.unwinding() != Unwinding::No {
            Data::Fixed(0)
        } else if exhaustive(st) {
            Data::Refuse(
                "a depth-first search explores every value of a decision and cannot explore a \
                 random draw's: use interleave_test::choose or choose_from for the values it \
                 should explore (or a fixed value), or search with the random or PCT strategy"
                    .to_owned(),
            )
        } else {
            Data::Decide
        }
    };
    let loc = std::panic::Location::caller();
    let bits = decide_data((api, api), (PickKind::Random, None), DRAW_OPTIONS, how, loc);
    u32::try_from(bits).expect("a draw is below 2^32")
}

/// Whether the search explores every value of a decision: a depth-first one, while the
/// execution runs (teardown decides nothing: each decision is its first option).
fn exhaustive(st: &mut ExecState) -> bool {
    st.phase == Phase::Running
        && st
            .strategy
            .as_mut()
            .is_some_and(|s| s.exhaustive().is_some())
}

/// A decision of `kind` among `n` values (reported as `what`, if named), as `how` says:
/// made by the strategy, fixed, or refused with a `Misuse` at `loc` that names `call`.
/// `api` names the function for what the decision may report.
fn decide_data(
    (api, call): (&str, &str),
    (kind, what): (PickKind, Option<&'static str>),
    n: usize,
    how: impl FnOnce(&mut ExecState, Tid) -> Data,
    loc: Loc,
) -> usize {
    let decided = atomics::with_memory(api, |st, me| match how(st, me) {
        Data::Decide => {
            let recorded = st.decisions.len();
            let value = sched::decide(st, me, kind, n)?;
            if let Some(decision) = st.decisions.get_mut(recorded) {
                decision.named = what;
            }
            Ok(Ok(value))
        }
        Data::Fixed(value) => Ok(Ok(value)),
        Data::Refuse(why) => Ok(Err(why)),
    });
    decided.unwrap_or_else(|why| misuse(format!("{call}: {why}"), loc))
}

/// Whether the calling thread runs a spawned task.
#[track_caller]
pub fn is_task(api: &str) -> bool {
    with_state(api, |a| super::wakes::is_task(a.st, a.me))
}

/// The calling thread's name.
#[track_caller]
pub fn name(api: &str) -> Option<String> {
    with_state(api, |a| a.thread_name(a.me).map(str::to_owned))
}

/// Gives the calling thread `label` (reports show it after the thread's name).
#[track_caller]
pub fn set_label(api: &str, label: Option<Box<str>>) {
    with_state(api, |a| {
        let labels = &mut a.st.labels;
        if labels.len() <= a.me {
            labels.resize(a.me + 1, None);
        }
        labels[a.me] = label;
    });
}

/// The calling thread's label.
#[track_caller]
pub fn label(api: &str) -> Option<String> {
    with_state(api, |a| a.st.label(a.me).map(str::to_owned))
}

/// How many decisions the execution has recorded so far (the next is numbered one more in
/// its schedule and report).
#[track_caller]
pub fn decisions(api: &str) -> u64 {
    with_state(api, |a| a.st.decisions.len() as u64)
}

/// The calling thread's vector clock in the memory model's happens-before, by thread id;
/// a new event of the thread begins after it. An untracked execution is marked to start
/// over tracked (it then runs on, to be discarded, and its clocks are empty).
#[track_caller]
pub fn clock(api: &str) -> Vec<u32> {
    with_state(api, |a| {
        a.st.tracked_for(true);
        a.st.mem.clock_now(a.me)
    })
}
