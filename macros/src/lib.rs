//! The `#[interleave]` test attribute of the `interleave-test` crate, and its Tokio-shaped
//! `select!`, `join!` and `try_join!`.
//!
//! Use them through their re-exports, `interleave_test::interleave` and
//! `interleave_test_tokio::{select, join, try_join}`: the expansions call into
//! `interleave_test`, so this crate is of no use on its own.

use proc_macro::TokenStream;
use root::Entry;

mod args;
mod errors;
mod expand;
mod join;
mod main_fn;
mod root;
mod select;

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
/// | `clock` | `"loaded"` or `"paused"` | how the virtual clock moves (`interleave_test::Clock`): `"paused"` fires a timer or timed wait only when every thread waits, in deadline order, with any `flavor` and on a function that is not `async`, for tests that assume generous timeouts; `"loaded"` if not given |
/// | `flavor` | `"current_thread"`, `"multi_thread"` or `"local"`, only on an `async fn` | the runtime the body runs in, as `#[tokio::test]`'s (`"local"`: a `LocalRuntime`, whose body may `spawn_local` without a `LocalSet`); `"current_thread"` if not given |
/// | `worker_threads` | integer ≥ 1, only with `flavor = "multi_thread"` | as Tokio's: what the runtime's metrics report (every task is a model thread, preempted anywhere, whatever the count) |
/// | `start_paused` | `true` or `false`, not with `flavor = "multi_thread"` | start with the virtual clock paused (`tokio::time::pause`) |
/// | `crate` | a path, such as `my_reexports::interleave_test` | where `interleave_test` is, for a crate that re-exports it (default `::interleave_test`) |
///
/// # Returning a `Result`
///
/// A test may return `()` or, as a `#[test]` may, `Result<(), E>` with `E: Debug` (its
/// return type named `Result` or `...Result`: `io::Result<()>`, `anyhow::Result<()>`, an
/// alias). `?` inside the body returns from the body; an `Err` fails the execution as a
/// panic with the message `Error: {e:?}`, reported, stored and replayed as any panic.
///
/// # `async fn` tests
///
/// `#[interleave]` on an `async fn` stands in for `#[tokio::test]` (which
/// `interleave_test_tokio::test` is, so `#[tokio::test]` itself works with the Tokio crate
/// or the `cfg` switch): the body is the future `future::block_on` runs on the model's main
/// thread, inside the runtime of `interleave_test_tokio` its arguments ask for, made when
/// the body first needs one: a current-thread one unless `flavor = "multi_thread"`. On the
/// current-thread runtime, tasks spawned with `tokio::spawn` run on the test's thread, only
/// while it awaits; on the multi-thread one each task is preempted at any switch point.
///
/// ```
/// use interleave_test::interleave;
/// use interleave_test_tokio::{self as tokio, sync::Mutex};
/// use interleave_test::sync::Arc;
///
/// #[interleave(strategy = "dfs", flavor = "multi_thread")]
/// async fn both_tasks_add() {
///     let total = Arc::new(Mutex::new(0));
///     let other = Arc::clone(&total);
///     let task = tokio::spawn(async move { *other.lock().await += 1 });
///     *total.lock().await += 1;
///     task.await.unwrap();
///     assert_eq!(*total.lock().await, 2);
/// }
/// # fn main() {}
/// ```
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
///             clock: None,
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
/// value of the wrong kind (integers for the numbers, a string for `strategy` and `clock`),
/// an unknown strategy or clock, or a number that does not fit; `iterations`, `max_steps` or `depth` equal to 0;
/// `depth` without `strategy = "pct"` or `max_preemptions` without `strategy = "dfs"`; an item
/// that is not a function; a function that takes arguments, returns something other than
/// `()` or a `Result` (an `E` without `Debug` is the compiler's error), is generic,
/// `const`, `unsafe` or `extern`; a `#[test]` attribute beside
/// `#[interleave]` (it adds its own); `worker_threads` without `flavor = "multi_thread"`,
/// `start_paused = true` with it, or any of the three on a function that is not `async`.
#[proc_macro_attribute]
pub fn interleave(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::interleave(attr.into(), item.into()).into()
}

/// `#[tokio::test]` of `interleave-test-tokio` (`interleave_test_tokio::test`): [`interleave`]
/// with its paths from `::interleave_test_tokio::__interleave`, so a crate that names only
/// the Tokio crate needs no `interleave_test` dependency.
#[proc_macro_attribute]
pub fn tokio_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    root::through(Entry::Tokio, || {
        expand::interleave(attr.into(), item.into())
    })
    .into()
}

/// `#[tokio::main]` under the `cfg` switch, as `interleave_test_tokio::main`: a program's
/// `main` is not a model, so the body is type-checked but not run, and `main` panics with
/// a message saying to run the model tests instead. Tokio's arguments are accepted.
#[proc_macro_attribute]
pub fn main(attr: TokenStream, item: TokenStream) -> TokenStream {
    root::through(Entry::Tokio, || main_fn::main(attr.into(), item.into())).into()
}

/// Waits on several async expressions at once, runs the handler of the first to complete
/// (whose output matches its pattern) and drops the others: Tokio's `select!`, whose start
/// branch is a decision of the model checker. Use it as `interleave_test_tokio::select!`.
///
/// # Syntax
///
/// ```text
/// select! {
///     biased;                                                        // optional, first
///     <pattern> = <async expression> (, if <precondition>)? => <handler>,
///     ...                                                            // 1 to 64 branches
///     else => <expression>                                           // optional, last
/// }
/// ```
///
/// The comma after a handler that is a block is optional, as in a `match`. A `<pattern>` is
/// any pattern a `match` arm takes (`Some(v)`, `Ok(x) | Err(x)`, `_`), refutable or not.
///
/// # Semantics
///
/// 1. Every `<precondition>` is evaluated, in written order. A branch whose precondition is
///    `false` is disabled for this `select!`.
/// 2. The `<async expression>` of each branch is evaluated, in written order (a disabled
///    branch's too, as Tokio does: its future is dropped unpolled), turned into a future
///    with `IntoFuture` and pinned on the stack.
/// 3. The futures of the enabled branches are polled together. At each poll, unless
///    `biased;`, which branch goes first is a decision: with `k` (two or more) branches still
///    enabled, `interleave_test::choose(k)` picks `j`, and polling starts at the `j`th
///    enabled branch and goes round in written order. A depth-first search explores every
///    start, random and PCT draw one, and replay repeats the recorded one (a schedule shows
///    it as a `choose` pick of the thread that polls the `select!`). With `biased;`,
///    branches are polled in written order and no decision is made.
/// 4. The first future to be ready whose output matches its branch's pattern wins. An output
///    that does not match disables its branch, and the others are polled on in the same poll.
/// 5. Every branch's future is dropped (the losers are cancelled, so a cancel-safety bug, such
///    as a message taken out of a queue by a future that then lost, is found), and only then
///    does the winner's `<handler>` run, with the pattern's bindings, in the caller's async
///    context: `.await`, `?`, `return`, `break` and `continue` act there as around the macro.
///    The value of the `select!` is the handler's; all handlers (and `else`) have one type.
/// 6. When every branch is disabled (by its precondition or by an output that did not match),
///    the `else` expression is the value, or, without `else`, the `select!` panics with
///    "all branches are disabled and there is no else branch".
///
/// `select!` expands to a block containing `.await`: it is usable only in an async context.
///
/// ```
/// use interleave_test::future::block_on;
/// use interleave_test_tokio as tokio;
/// use interleave_test::{Builder, StrategyKind};
/// use std::sync::Mutex;
///
/// // Both futures are ready at the first poll: the start branch decides the winner, and a
/// // depth-first search runs one execution per start.
/// let winners = Mutex::new(Vec::new());
/// let report = Builder::new()
///     .strategy(StrategyKind::Dfs { max_preemptions: None })
///     .check(|| {
///         let winner = block_on(async {
///             tokio::select! {
///                 a = async { 1 } => a,
///                 b = async { 2 } => b,
///             }
///         });
///         winners.lock().unwrap().push(winner);
///     })
///     .unwrap();
/// assert_eq!(report.executions, 2);
/// assert_eq!(*winners.lock().unwrap(), [1, 2]);
///
/// // Preconditions, a refutable pattern, `else` and `break` in a loop.
/// interleave_test::check(|| {
///     let sum = block_on(async {
///         let (mut a, mut b) = (Some(1), Some(2));
///         let mut sum = 0;
///         loop {
///             tokio::select! {
///                 Some(v) = async { a.take() }, if a.is_some() => sum += v,
///                 Some(v) = async { b.take() }, if b.is_some() => sum += v,
///                 else => break,
///             }
///         }
///         sum
///     });
///     assert_eq!(sum, 3);
/// })
/// .unwrap();
/// ```
///
/// # Differences from Tokio
///
/// - The start branch is a decision of the search (above), not a draw from a thread-local
///   random number generator. Outside a model it is the first enabled branch, as with
///   `biased;`.
/// - A disabled branch's future is dropped as soon as it is made, not when the `select!`
///   ends.
/// - A future that completed with an output its pattern did not match is dropped then, not
///   when the `select!` ends.
/// - Which names a pattern binds is read from its syntax, as rustc's naming lints read it:
///   an identifier that starts with an uppercase letter and has no `ref`, `mut` or `@` is
///   taken for a constant, a unit struct or a unit variant, so a binding named so does not
///   compile (its handler does not see it). A macro in a pattern binds nothing the handler
///   sees.
/// - The expansion names `::interleave_test_tokio::__private`: a renamed
///   `interleave_test_tokio` dependency is not supported, as Tokio's macros do not support
///   a renamed `tokio`.
///
/// # Errors
///
/// Compile errors, with the span of the mistake: no branch; more than 64 branches; `else`
/// given twice or not last; a missing `=` after a pattern, `=>` before a handler, or `,`
/// after a handler that is not a block.
#[proc_macro]
pub fn select(input: TokenStream) -> TokenStream {
    root::through(Entry::Tokio, || select::select(input.into())).into()
}

/// Polls several futures concurrently until all are done, and returns their outputs as a
/// tuple in written order: Tokio's `join!`. Use it as `interleave_test_tokio::join!`.
///
/// # Syntax
///
/// `join!(a, b, ...)`, or `join!(biased; a, b, ...)`; a trailing comma is allowed.
///
/// # Semantics
///
/// Each expression is evaluated once, in written order, and turned into a future with
/// `IntoFuture`; the futures are pinned on the stack and polled together, on the caller's
/// task, until every one is ready. A future that finished is dropped and not polled again.
/// As Tokio's, each poll starts one future later than the previous poll did, going round
/// (the first poll at the first future, the next at the second, ...); with `biased;`, every
/// poll goes in written order. The order is fixed, not a decision: the interleavings of
/// what the futures wait for (tasks, threads, timers, primitives) are what the search
/// explores. `join!()` is `()`. It is usable only in an async context (it contains
/// `.await`).
///
/// ```
/// use interleave_test::future::{self, block_on};
/// use interleave_test_tokio as tokio;
///
/// interleave_test::check(|| {
///     let task = future::spawn(async { 40 });
///     let (a, b) = block_on(async { tokio::join!(async { 2 }, task) });
///     assert_eq!(a + b.unwrap(), 42);
/// })
/// .unwrap();
/// ```
///
/// # Differences from Tokio
///
/// None in behaviour. The expansion names `::interleave_test_tokio::__private`: a renamed
/// `interleave_test_tokio` dependency is not supported, as Tokio's macros do not support a
/// renamed `tokio`.
#[proc_macro]
pub fn join(input: TokenStream) -> TokenStream {
    root::through(Entry::Tokio, || join::join(join::Kind::Join, input.into())).into()
}

/// Polls several futures whose outputs are `Result`s concurrently, until all are `Ok` or one
/// is `Err`: Tokio's `try_join!`. Use it as `interleave_test_tokio::try_join!`.
///
/// # Syntax
///
/// `try_join!(a, b, ...)`, or `try_join!(biased; a, b, ...)`; a trailing comma is allowed.
/// Each future's output is a `Result<T, E>`, with the same `E` for all.
///
/// # Semantics
///
/// As [`join!`](macro@join) (evaluation in written order, the same poll order), but the value
/// is `Ok((t1, t2, ...))` when every output is `Ok`, and the first `Err` seen otherwise: it
/// ends the join at once, and the futures that had not finished are dropped without being
/// polled again. `try_join!()` is `Ok(())`.
///
/// ```
/// use interleave_test::future::block_on;
/// use interleave_test_tokio as tokio;
///
/// interleave_test::check(|| {
///     block_on(async {
///         let both = tokio::try_join!(async { Ok::<_, &str>(1) }, async { Ok(2) });
///         assert_eq!(both, Ok((1, 2)));
///         let failed = tokio::try_join!(async { Ok(1) }, async { Err::<u8, _>("no") });
///         assert_eq!(failed, Err("no"));
///     })
/// })
/// .unwrap();
/// ```
///
/// # Differences from Tokio
///
/// None in behaviour; a renamed `interleave_test_tokio` dependency is not supported, as for
/// [`join!`](macro@join).
#[proc_macro]
pub fn try_join(input: TokenStream) -> TokenStream {
    root::through(Entry::Tokio, || {
        join::join(join::Kind::TryJoin, input.into())
    })
    .into()
}

/// `#[tokio::test]` of the Tokio switch crate (`interleave-tokio`): [`interleave`] with its
/// paths from `::tokio::__interleave`. Not public API.
#[doc(hidden)]
#[proc_macro_attribute]
pub fn switch_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    root::through(Entry::Switch, || {
        expand::interleave(attr.into(), item.into())
    })
    .into()
}

/// `#[tokio::main]` of the Tokio switch crate: [`main`] with its paths from
/// `::tokio::__interleave`. Not public API.
#[doc(hidden)]
#[proc_macro_attribute]
pub fn switch_main(attr: TokenStream, item: TokenStream) -> TokenStream {
    root::through(Entry::Switch, || main_fn::main(attr.into(), item.into())).into()
}

/// `select!` of the Tokio switch crate: [`select!`] with its paths from
/// `::tokio::__interleave`. Not public API.
#[doc(hidden)]
#[proc_macro]
pub fn switch_select(input: TokenStream) -> TokenStream {
    root::through(Entry::Switch, || select::select(input.into())).into()
}

/// `join!` of the Tokio switch crate: [`join!`] with its paths from
/// `::tokio::__interleave`. Not public API.
#[doc(hidden)]
#[proc_macro]
pub fn switch_join(input: TokenStream) -> TokenStream {
    root::through(Entry::Switch, || join::join(join::Kind::Join, input.into())).into()
}

/// `try_join!` of the Tokio switch crate: [`try_join!`] with its paths from
/// `::tokio::__interleave`. Not public API.
#[doc(hidden)]
#[proc_macro]
pub fn switch_try_join(input: TokenStream) -> TokenStream {
    root::through(Entry::Switch, || {
        join::join(join::Kind::TryJoin, input.into())
    })
    .into()
}

#[cfg(test)]
mod tests;
