//! Nondeterministic choices of data: [`choose`] and [`choose_from`].
//!
//! A model that picks a value (a backoff, a victim to steal from, which key to touch) asks
//! the explorer for it instead of a random number generator: every value is then a
//! decision of the search, recorded in the schedule and replayed exactly. Random and PCT
//! draw it uniformly from the run's seed; DFS explores every value, one execution (or one
//! class, with reduction) after another, so an exhausted DFS run's proof covers every
//! value. DFS explores at most [`DFS_CHOOSE_LIMIT`] values per choice: a choice among more
//! is a `Misuse` failure under DFS (narrow the choice, or search with random or PCT),
//! never a partial proof.
//!
//! A choice is not a switch point: it is the calling thread's own decision, made where it
//! is called, and no other thread runs in between.

use std::ops::{Range, RangeInclusive};

use crate::primitive;

/// The most values one [`choose`] explores under DFS. A choice among more is a `Misuse`
/// failure under DFS, never a silent partial proof; random and PCT draw from any number.
pub const DFS_CHOOSE_LIMIT: usize = 1024;

/// One of `0..n`, chosen by the explorer: uniformly under random and PCT, every value in
/// turn under DFS (from 0 up), the recorded one under replay.
///
/// `n` must be at least 1 (`choose(1)` is 0 and decides nothing); under DFS at most
/// [`DFS_CHOOSE_LIMIT`]. Outside a model it is 0, the first option, as every decision there,
/// whatever `n`.
///
/// ```
/// use interleave_test::{Builder, StrategyKind, choose};
///
/// // DFS runs the model once per value: the failing one is found and replays.
/// let dfs = Builder::new().strategy(StrategyKind::Dfs { max_preemptions: None });
/// let failure = dfs
///     .check(|| assert_ne!(choose(4), 3, "the one bad value"))
///     .unwrap_err();
/// assert!(failure.to_string().contains("the one bad value"));
/// ```
#[track_caller]
pub fn choose(n: usize) -> usize {
    primitive::data::choose("interleave_test::choose", n, DFS_CHOOSE_LIMIT)
}

/// One of `values` (an integer range, or a slice, array or `Vec` by reference), chosen by
/// the explorer as [`choose`] chooses an index: under DFS every value, in order.
///
/// ```
/// use interleave_test::{Builder, StrategyKind, choose_from};
///
/// let dfs = Builder::new().strategy(StrategyKind::Dfs { max_preemptions: None });
/// let report = dfs
///     .check(|| {
///         let delay_ms = choose_from(1..=3u64);
///         let victim = choose_from(&["a", "b"]);
///         assert!((1..=3).contains(&delay_ms) && ["a", "b"].contains(victim));
///     })
///     .unwrap();
/// assert_eq!(report.executions, 6);
/// ```
#[track_caller]
pub fn choose_from<C: Choices>(values: C) -> C::Item {
    let api = "interleave_test::choose_from";
    let Some(n) = values.count().filter(|&n| n > 0) else {
        return primitive::misuse(
            format!(
                "{api}: {}; pass at least one value, and a range of at most usize::MAX values",
                match values.count() {
                    Some(_) => "there is no value to choose from (the range or slice is empty)",
                    None => "the range has more values than a usize can count",
                }
            ),
            std::panic::Location::caller(),
        );
    };
    let i = primitive::data::choose(api, n, DFS_CHOOSE_LIMIT);
    values.nth(i)
}

/// What [`choose_from`] chooses among: a number of values, and the `i`th of them.
pub trait Choices {
    /// What a choice yields.
    type Item;

    /// How many values there are; `None` if more than a `usize` counts.
    fn count(&self) -> Option<usize>;

    /// The `i`th value (`i` below [`count`](Self::count)).
    fn nth(self, i: usize) -> Self::Item;
}

impl<'a, T> Choices for &'a [T] {
    type Item = &'a T;

    fn count(&self) -> Option<usize> {
        Some(self.len())
    }

    fn nth(self, i: usize) -> &'a T {
        &self[i]
    }
}

impl<'a, T, const N: usize> Choices for &'a [T; N] {
    type Item = &'a T;

    fn count(&self) -> Option<usize> {
        Some(N)
    }

    fn nth(self, i: usize) -> &'a T {
        &self[i]
    }
}

impl<'a, T> Choices for &'a Vec<T> {
    type Item = &'a T;

    fn count(&self) -> Option<usize> {
        Some(self.len())
    }

    fn nth(self, i: usize) -> &'a T {
        &self[i]
    }
}

/// Integer ranges: the values in order, counted without overflow (as `i128` spans).
macro_rules! integer_choices {
    ($($t:ty),*) => {$(
        impl Choices for Range<$t> {
            type Item = $t;

            fn count(&self) -> Option<usize> {
                let span = (self.end as i128) - (self.start as i128);
                usize::try_from(span.max(0)).ok()
            }

            fn nth(self, i: usize) -> $t {
                (self.start as i128 + i as i128) as $t
            }
        }

        impl Choices for RangeInclusive<$t> {
            type Item = $t;

            fn count(&self) -> Option<usize> {
                let span = (*self.end() as i128) - (*self.start() as i128) + 1;
                usize::try_from(span.max(0)).ok()
            }

            fn nth(self, i: usize) -> $t {
                (*self.start() as i128 + i as i128) as $t
            }
        }
    )*};
}

integer_choices!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);
