//! The `#[interleave]` test attribute of the `interleave-test` crate.
//!
//! Use it through its re-export, `interleave_test::interleave`: the expansion calls into
//! `interleave_test`, so this crate is of no use on its own.

use proc_macro::TokenStream;

mod args;
mod errors;
mod expand;

/// Makes a function a test whose body is the **model** of an exploration.
///
/// The body runs once per execution, while a strategy chooses the interleaving of the threads
/// it spawns with `interleave_test::thread` and of their operations on `interleave_test::sync`
/// primitives. The test first replays the schedules stored in its regression corpus, then
/// explores; a failure panics with the report, stores the schedule in the corpus
/// (`<crate root>/interleave-regressions/<module path>/<function>/`, or under the directory
/// named by `INTERLEAVE_REGRESSIONS`) and says how to replay it.
///
/// ```
/// use interleave_test::interleave;
/// use interleave_test::sync::atomic::{AtomicUsize, Ordering};
/// use interleave_test::sync::{Arc, Mutex};
/// use interleave_test::thread;
///
/// #[interleave(strategy = "dfs")]
/// fn both_increments_are_counted() {
///     let hits = Arc::new(AtomicUsize::new(0));
///     let other = Arc::clone(&hits);
///     let t = thread::spawn(move || other.fetch_add(1, Ordering::SeqCst));
///     hits.fetch_add(1, Ordering::SeqCst);
///     t.join().unwrap();
///     assert_eq!(hits.load(Ordering::SeqCst), 2);
/// }
///
/// /// Every attribute after `#[interleave]` is kept: doc comments, `#[ignore]`,
/// /// `#[should_panic]`, `#[cfg(...)]`.
/// #[interleave(iterations = 200, seed = 7, strategy = "pct", depth = 2)]
/// #[should_panic(expected = "interleave-test found a deadlock")]
/// fn opposite_lock_order_deadlocks() {
///     let a = Arc::new(Mutex::new(()));
///     let b = Arc::new(Mutex::new(()));
///     let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
///     let t = thread::spawn(move || {
///         let _a = a2.lock().unwrap();
///         let _b = b2.lock().unwrap();
///     });
///     {
///         let _b = b.lock().unwrap();
///         let _a = a.lock().unwrap();
///     }
///     t.join().unwrap();
/// }
/// # fn main() {}
/// ```
///
/// # Arguments
///
/// All optional, written `key = value` and separated by commas. A setting that is not given
/// comes from the environment variables of `interleave_test::env`, or their defaults; a set
/// environment variable also overrides a value given here, so CI can turn one knob for every
/// test.
///
/// | argument | value | meaning |
/// |---|---|---|
/// | `iterations` | integer ≥ 1 | executions to run |
/// | `seed` | integer | seed of the `random` and `pct` strategies |
/// | `max_steps` | integer ≥ 1 | switch points per execution before it counts as a livelock |
/// | `strategy` | `"random"`, `"pct"` or `"dfs"` | the search algorithm |
/// | `depth` | integer ≥ 1, only with `strategy = "pct"` | PCT bug depth; `interleave_test::DEFAULT_PCT_DEPTH` (3) if not given |
/// | `max_preemptions` | integer, only with `strategy = "dfs"` | DFS preemption bound; unbounded if not given |
/// | `partial` | `true` or `false` | whether a DFS search that did not finish (stopped by `INTERLEAVE_ITERATIONS` or `INTERLEAVE_MAX_TIME`) passes; by default it fails, as `INTERLEAVE_PARTIAL` unset |
/// | `crate` | a path, such as `my_reexports::interleave_test` | where `interleave_test` is, for a crate that re-exports it (default `::interleave_test`) |
///
/// # Expansion
///
/// ```text
/// #[interleave(iterations = 500, strategy = "pct")]
/// /// Docs.
/// fn name() { body }
/// ```
///
/// becomes (paths written in full, from `::interleave_test` or the `crate` argument)
///
/// ```text
/// #[test]
/// /// Docs.
/// fn name() {
///     interleave_test::__private::run_test(
///         &interleave_test::__private::TestSpec {
///             name: concat!(module_path!(), "::", "name"),
///             manifest_dir: env!("CARGO_MANIFEST_DIR"),
///             iterations: Some(500),
///             seed: None,
///             max_steps: None,
///             strategy: Some(interleave_test::StrategyKind::Pct {
///                 depth: interleave_test::DEFAULT_PCT_DEPTH,
///             }),
///             partial: None,
///             cfg_interleave: cfg!(interleave),
///             release: !cfg!(debug_assertions),
///         },
///         || { body },
///     )
/// }
/// ```
///
/// # Errors
///
/// Compile errors, each pointing at what is wrong: an unknown argument; a key given twice; a
/// value of the wrong kind (integers for the numbers, a string for `strategy`), an unknown
/// strategy, or a number that does not fit; `iterations`, `max_steps` or `depth` equal to 0;
/// `depth` without `strategy = "pct"` or `max_preemptions` without `strategy = "dfs"`; an item
/// that is not a function; a function that takes arguments, returns something other than
/// `()`, is generic, `const`, `unsafe` or `extern`; a `#[test]` attribute beside
/// `#[interleave]` (it adds its own). An `async fn` is accepted: its body is the future
/// `interleave_test::future::block_on` runs on the model's main thread.
#[proc_macro_attribute]
pub fn interleave(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::interleave(attr.into(), item.into()).into()
}

#[cfg(test)]
mod tests;
