//! Decisions of data rather than of threads: a value of `choose` (one of `n`) and a draw of
//! the model's random number generator (32 random bits). Neither is a switch point: the
//! calling thread decides where it is, and no other thread runs in between. And what a
//! thread can ask of itself (`current`): its label, the decisions so far, its clock.
//!
//! A depth-first search explores every value of a decision, so it refuses what it cannot
//! exhaust (a choice among more than its limit, any random draw): a `Misuse` that says what
//! to write instead, never a silent partial proof.

use super::execution::ExecState;
use super::{Loc, atomics, misuse, sched, with_state};
use crate::op::PickKind;
use crate::settings::StrategyName;

/// How many values a random draw is one of: 32 bits, so that every value is an option
/// below the count (a 64-bit draw is two of them).
const DRAW_OPTIONS: usize = 1 << 32;

/// One of `0..n`, chosen by the strategy for the calling thread (`PickKind::Choose`).
/// `n` 0, or more than `dfs_limit` under a depth-first search, is a `Misuse`.
#[track_caller]
pub(crate) fn choose(api: &str, n: usize, dfs_limit: usize) -> usize {
    let refuse = |exhaustive: bool| match n {
        0 => Some("there is no value to choose from: pass n of at least 1".to_owned()),
        _ if n > dfs_limit && exhaustive => Some(format!(
            "a depth-first search explores every value of a choice, and at most {dfs_limit} \
             (interleave_test::DFS_CHOOSE_LIMIT); this one has {n}: narrow it (choose among \
             classes of values), or search with the random or PCT strategy"
        )),
        _ => None,
    };
    let loc = std::panic::Location::caller();
    let call = format!("{api}({n})");
    decide_data((api, &call), PickKind::Choose, n, refuse, loc)
}

/// 32 random bits for the calling thread, drawn by the strategy (`PickKind::Random`).
/// Under a depth-first search, a `Misuse`: it cannot explore 2^32 values per draw.
#[track_caller]
pub(crate) fn draw(api: &str) -> u32 {
    let refuse = |exhaustive: bool| {
        exhaustive.then(|| {
            "a depth-first search explores every value of a decision and cannot explore a \
             random draw's: use interleave_test::choose or choose_from for the values it \
             should explore (or a fixed value), or search with the random or PCT strategy"
                .to_owned()
        })
    };
    let loc = std::panic::Location::caller();
    let bits = decide_data((api, api), PickKind::Random, DRAW_OPTIONS, refuse, loc);
    u32::try_from(bits).expect("a draw is below 2^32")
}

/// A decision of `kind` among `n` values, unless `refuse` (told whether the search is a
/// depth-first one) says why it cannot be made: then a `Misuse` at `loc` that names `call`.
/// `api` names the function if it is called outside a model.
fn decide_data(
    (api, call): (&str, &str),
    kind: PickKind,
    n: usize,
    refuse: impl FnOnce(bool) -> Option<String>,
    loc: Loc,
) -> usize {
    let exhaustive = |st: &ExecState| {
        st.strategy
            .as_ref()
            .is_some_and(|s| s.name() == StrategyName::Dfs)
    };
    let decided = atomics::with_memory(api, |st, me| match refuse(exhaustive(st)) {
        Some(why) => Ok(Err(why)),
        None => sched::decide(st, me, kind, n).map(Ok),
    });
    decided.unwrap_or_else(|why| misuse(format!("{call}: {why}"), loc))
}

/// Whether the calling thread runs a spawned task.
#[track_caller]
pub(crate) fn is_task(api: &str) -> bool {
    with_state(api, |a| super::tasks::is_task(a.st, a.me))
}

/// The calling thread's name.
#[track_caller]
pub(crate) fn name(api: &str) -> Option<String> {
    with_state(api, |a| a.thread_name(a.me).map(str::to_owned))
}

/// Gives the calling thread `label` (reports show it after the thread's name).
#[track_caller]
pub(crate) fn set_label(api: &str, label: Option<Box<str>>) {
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
pub(crate) fn label(api: &str) -> Option<String> {
    with_state(api, |a| a.st.label(a.me).map(str::to_owned))
}

/// How many decisions the execution has recorded so far (the next is numbered one more in
/// its schedule and report).
#[track_caller]
pub(crate) fn decisions(api: &str) -> u64 {
    with_state(api, |a| a.st.decisions.len() as u64)
}

/// The calling thread's vector clock in the memory model's happens-before, by thread id;
/// a new event of the thread begins after it. An untracked execution is marked to start
/// over tracked (it then runs on, to be discarded, and its clocks are empty).
#[track_caller]
pub(crate) fn clock(api: &str) -> Vec<u32> {
    with_state(api, |a| {
        a.st.tracked_for(true);
        a.st.mem.clock_now(a.me)
    })
}
