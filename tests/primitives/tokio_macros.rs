//! `interleave_test_tokio::{select, join, try_join}`: `select!`'s start branch is a
//! decision (explored by DFS, replayed exactly), its disabled branches, `else`, the
//! handler's control flow and the cancellation of the losers before the handler runs;
//! `join!`'s poll order and `try_join!`'s early end.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, unbounded};
use interleave_test::future::{self, block_on};
use interleave_test::{Builder, FailureKind, StrategyKind};
use interleave_test_tokio as tokio;

use crate::common::{each_dfs, each_sampler, line_of};

const SOURCE: &str = include_str!("tokio_macros.rs");

/// An exhaustive DFS, one execution at a time.
fn dfs() -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .parallelism(1)
}

/// Runs `model` (whose value is what an execution saw) under `builder` and returns the
/// number of executions and the set of values seen.
fn outcomes<T: Ord + Send>(builder: &Builder, model: impl Fn() -> T + Sync) -> (u64, BTreeSet<T>) {
    let seen = Mutex::new(BTreeSet::new());
    let report = builder
        .check(|| {
            let value = model();
            seen.lock().unwrap().insert(value);
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(report.exhausted, "{report}");
    (report.executions, seen.into_inner().unwrap())
}

#[test]
fn select_explores_each_start_branch_of_two_ready_futures() {
    each_dfs(|builder, name, _| {
        // One decision, the start branch among the two enabled: start 0 gives 1, start 1
        // gives 2; nothing else is decided (no other thread, no wait), so 2 executions.
        let got = outcomes(&builder, || {
            block_on(async {
                tokio::select! {
                    a = async { 1 } => a,
                    b = async { 2 } => b,
                }
            })
        });
        assert_eq!(got, (2, BTreeSet::from([1, 2])), "{name}");
    });
}

#[test]
fn biased_select_polls_in_written_order_and_decides_nothing() {
    each_dfs(|builder, name, _| {
        let got = outcomes(&builder, || {
            block_on(async {
                tokio::select! {
                    biased;
                    a = async { 1 } => a,
                    b = async { 2 } => b,
                }
            })
        });
        assert_eq!(got, (1, BTreeSet::from([1])), "{name}");
    });
}

#[test]
fn a_branch_whose_output_does_not_match_is_disabled_and_another_wins() {
    // Start 0: `None` does not match `Some(x)`, so the first branch is disabled and the
    // second, polled in the same poll, wins; start 1: the second wins at once. 2 executions.
    let got = outcomes(&dfs(), || {
        block_on(async {
            tokio::select! {
                Some(x) = async { None::<i32> } => x,
                y = async { 7 } => y,
            }
        })
    });
    assert_eq!(got, (2, BTreeSet::from([7])));
}

#[test]
fn preconditions_run_first_and_a_disabled_branch_is_never_polled() {
    // Branch b is disabled: its expression runs (as in Tokio) but its future is never
    // polled; a and c are enabled: 2 starts.
    let got = outcomes(&dfs(), || {
        let log = RefCell::new(Vec::new());
        let note = |what: &'static str| log.borrow_mut().push(what);
        let value = block_on(async {
            tokio::select! {
                x = { note("future a"); async { 1 } }, if { note("precondition a"); true } => x,
                y = { note("future b"); async { unreachable!("polled"); #[allow(unreachable_code)] 2 } }, if { note("precondition b"); false } => y,
                z = { note("future c"); async { 3 } } => z,
            }
        });
        let log = log.into_inner();
        assert_eq!(
            log,
            [
                "precondition a",
                "precondition b",
                "future a",
                "future b",
                "future c"
            ]
        );
        value
    });
    assert_eq!(got, (2, BTreeSet::from([1, 3])));
}

#[test]
fn else_runs_when_every_branch_is_disabled() {
    // One branch is disabled by its precondition, the other by its output: no start
    // decision is left to make (one branch enabled at the first poll), so one execution.
    let got = outcomes(&dfs(), || {
        block_on(async {
            tokio::select! {
                x = async { 1 }, if false => x,
                Some(y) = async { None } => y,
                else => 0,
            }
        })
    });
    assert_eq!(got, (1, BTreeSet::from([0])));
}

#[test]
fn every_branch_disabled_without_else_panics_with_tokios_message() {
    let failure = dfs()
        .check(|| {
            block_on(async {
                // ALL_DISABLED
                tokio::select! {
                    x = async { 1 }, if false => x,
                    Some(y) = async { None } => y,
                }
            });
        })
        .expect_err("the select! panics");
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
    assert_eq!(
        failure.message(),
        "all branches are disabled and there is no else branch"
    );
    let location = failure.location().expect("a panic has a location");
    assert!(location.file().ends_with("tokio_macros.rs"), "{failure}");
    assert_eq!(location.line(), line_of(SOURCE, "ALL_DISABLED") + 1);
}

/// What the handlers' control flow did, in a loop of `select!`s (biased, so no decisions):
/// the loop breaks at `stop_at` (if below 4), then `text` is parsed with `?`.
async fn control_flow(stop_at: u32, text: &str) -> Result<Vec<u32>, String> {
    let mut seen = Vec::new();
    let mut i = 0;
    let last = loop {
        i += 1;
        tokio::select! {
            biased;
            v = async { i }, if i == 2 => {
                // `continue` goes on with the caller's loop.
                seen.push(v * 10);
                continue;
            }
            v = async { i }, if i == stop_at => break v,
            v = async { Ok::<u32, String>(i) }, if i < 4 => seen.push(v?),
            _ = async {} => return Err(format!("returned at {i}")),
        }
    };
    let parsed: u32 = tokio::select! {
        r = async { text.parse::<u32>() } => r.map_err(|e| e.to_string())?,
    };
    seen.push(last + parsed);
    Ok(seen)
}

#[test]
fn handlers_break_continue_return_and_use_the_question_mark() {
    let report = dfs()
        .check(|| {
            block_on(async {
                // 1: pushed through `?`; 2: pushed, then `continue`; 3: `break 3`; + 5.
                assert_eq!(control_flow(3, "5").await, Ok(vec![1, 20, 8]));
                assert_eq!(
                    control_flow(3, "x").await,
                    Err("invalid digit found in string".to_owned())
                );
                // 4: no branch but the last is enabled, which returns.
                assert_eq!(control_flow(5, "5").await, Err("returned at 4".to_owned()));
                let err: Result<u32, String> = async {
                    tokio::select! {
                        v = async { Err::<u32, _>("bad".to_owned()) } => Ok(v?),
                    }
                }
                .await;
                assert_eq!(err, Err("bad".to_owned()));
            });
        })
        .unwrap();
    assert_eq!(report.executions, 1);
}

#[test]
fn handler_values_break_out_of_the_loop_and_see_the_bindings() {
    let report = dfs()
        .check(|| {
            let got = block_on(async {
                let mut seen = Vec::new();
                let mut i = 0u32;
                let last = loop {
                    i += 1;
                    tokio::select! {
                        biased;
                        (a, mut b) = async { (i, i + 100) }, if i < 3 => {
                            b += 1;
                            seen.push(a + b);
                        }
                        ref text = async { String::from("done") } => break text.clone(),
                    }
                };
                (seen, last)
            });
            // 1 + (101 + 1), 2 + (102 + 1), then the `ref` binding at 3.
            assert_eq!(got, (vec![103, 105], "done".to_owned()));
        })
        .unwrap();
    assert_eq!(report.executions, 1);
}

/// Adds one to its counter when dropped.
struct Guard<'a>(&'a Cell<u32>);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn every_branch_future_is_dropped_before_the_handler_runs() {
    // The first poll has two enabled branches: 2 executions; the pending branch loses in
    // both, and both futures (the winner's too) are gone when the handler runs.
    let got = outcomes(&dfs(), || {
        let drops = Cell::new(0);
        let (winner, loser) = (Guard(&drops), Guard(&drops));
        let seen = block_on(async {
            tokio::select! {
                v = async move { let _g = winner; 1 } => (v, drops.get()),
                _ = async move { let _g = loser; std::future::pending::<()>().await } => (0, 0),
            }
        });
        assert_eq!(drops.get(), 2);
        seen
    });
    assert_eq!(got, (2, BTreeSet::from([(1, 2)])));
}

/// A receive that is not cancel safe: it takes the message, then awaits again before
/// returning it, so a `select!` whose other branch wins in between loses the message.
async fn lossy_recv(rx: &mut UnboundedReceiver<u32>) -> Option<u32> {
    let message = rx.next().await;
    future::yield_now().await;
    message
}

/// The next message: with [`lossy_recv`] if `lossy`, else with the cancel-safe `next`.
async fn recv(rx: &mut UnboundedReceiver<u32>, lossy: bool) -> Option<u32> {
    match lossy {
        true => lossy_recv(rx).await,
        false => rx.next().await,
    }
}

/// Two tasks send one message each on channels of their own; the main thread receives in
/// a loop of `select!`s until both channels are closed. `lossy`: receive with
/// [`lossy_recv`].
fn two_channels(lossy: bool) {
    let (tx_a, mut rx_a) = unbounded::<u32>();
    let (tx_b, mut rx_b) = unbounded::<u32>();
    let a = future::spawn(async move { tx_a.unbounded_send(1).unwrap() });
    let b = future::spawn(async move { tx_b.unbounded_send(2).unwrap() });
    let mut got = block_on(async {
        let mut got = Vec::new();
        let (mut open_a, mut open_b) = (true, true);
        loop {
            tokio::select! {
                v = recv(&mut rx_a, lossy), if open_a => match v {
                    Some(v) => got.push(v),
                    None => open_a = false,
                },
                v = recv(&mut rx_b, lossy), if open_b => match v {
                    Some(v) => got.push(v),
                    None => open_b = false,
                },
                else => break,
            }
        }
        got
    });
    block_on(async { (a.await.unwrap(), b.await.unwrap()) });
    got.sort_unstable();
    assert_eq!(got, [1, 2], "a message was lost");
}

#[test]
fn a_message_lost_to_cancellation_is_found_and_the_start_decisions_replay() {
    let mut builders: Vec<(Builder, String)> = Vec::new();
    each_sampler(11, |builder, name| builders.push((builder, name)));
    builders.push((dfs(), "DFS".to_owned()));
    for (builder, name) in builders {
        let failure = builder
            .check(|| two_channels(true))
            .expect_err("the lost message is found");
        assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
        assert!(
            failure.message().contains("a message was lost"),
            "{name}: {failure}"
        );
        // The start decisions are recorded, made by the main thread (the only one that
        // runs a `select!`; a pick is a decision when 2 branches are enabled)...
        let starts: Vec<_> = failure
            .schedule()
            .decisions()
            .iter()
            .filter(|d| d.pick().is_some_and(|(kind, _)| kind == "choose"))
            .collect();
        assert!(!starts.is_empty(), "{name}: {:#?}", failure.schedule());
        assert!(
            starts.iter().all(|d| d.thread() == 0 && d.options() == 2),
            "{name}: {starts:#?}"
        );
        // ...and replayed: the same failure, decision for decision.
        let again = builder
            .replay(|| two_channels(true), failure.schedule())
            .expect_err("the schedule replays the failure");
        assert_eq!(again, failure, "{name}");
    }
}

#[test]
fn a_cancel_safe_receive_loses_no_message_in_any_schedule() {
    let report = dfs().check(|| two_channels(false)).unwrap();
    assert!(report.exhausted, "{report}");
}

/// A future that records its name in `log` at every poll and is ready at its
/// `pending + 1`th poll (it wakes itself when pending).
struct Recorded<'a> {
    name: char,
    pending: u32,
    log: &'a RefCell<String>,
}

impl Future for Recorded<'_> {
    type Output = char;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<char> {
        self.log.borrow_mut().push(self.name);
        if self.pending == 0 {
            return Poll::Ready(self.name);
        }
        self.pending -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The log of a `join!` of `a` (ready at once), `b` and `c` (each pending twice); `biased`:
/// with `biased;`.
fn join_poll_order(biased: bool) -> String {
    let log = RefCell::new(String::new());
    let recorded = |name, pending| Recorded {
        name,
        pending,
        log: &log,
    };
    let (a, b, c) = (recorded('a', 0), recorded('b', 2), recorded('c', 2));
    let outputs = block_on(async {
        match biased {
            true => tokio::join!(biased; a, b, c),
            false => tokio::join!(a, b, c),
        }
    });
    assert_eq!(outputs, ('a', 'b', 'c'));
    log.into_inner()
}

#[test]
fn join_rotates_its_start_and_never_polls_a_finished_future() {
    let report = dfs()
        .check(|| {
            // Poll 1 starts at a: a (ready), b, c; poll 2 at b: b, c (a is done); poll 3 at
            // c: c, b (both ready).
            assert_eq!(join_poll_order(false), "abcbccb");
            // With `biased;`, every poll in written order.
            assert_eq!(join_poll_order(true), "abcbcbc");
        })
        .unwrap();
    assert_eq!(report.executions, 1);
}

#[test]
fn join_returns_outputs_in_written_order_and_runs_its_futures_concurrently() {
    /// A flag that a future waits for and another sets.
    #[derive(Default)]
    struct Flag {
        set: Cell<bool>,
        waker: RefCell<Option<Waker>>,
    }
    let report = dfs()
        .check(|| {
            let flag = Flag::default();
            let wait = std::future::poll_fn(|cx| match flag.set.get() {
                true => Poll::Ready("saw it"),
                false => {
                    *flag.waker.borrow_mut() = Some(cx.waker().clone());
                    Poll::Pending
                }
            });
            let set = async {
                future::yield_now().await;
                flag.set.set(true);
                flag.waker.take().expect("the waiter waits").wake();
                3.5
            };
            // The waiter is first and waits for the setter: awaited one after the other,
            // this would never end.
            let got = block_on(async { tokio::join!(wait, set, async { 7 }) });
            assert_eq!(got, ("saw it", 3.5, 7));
            let () = block_on(async { tokio::join!() });
        })
        .unwrap();
    assert_eq!(report.executions, 1);
}

#[test]
fn try_join_returns_every_ok_value() {
    let report = dfs()
        .check(|| {
            let got = block_on(async {
                tokio::try_join!(async { Ok::<_, String>(1) }, async { Ok("two") }, async {
                    future::yield_now().await;
                    Ok(3)
                })
            });
            assert_eq!(got, Ok((1, "two", 3)));
            let none: Result<(), String> = block_on(async { tokio::try_join!() });
            assert_eq!(none, Ok(()));
        })
        .unwrap();
    assert_eq!(report.executions, 1);
}

#[test]
fn try_join_ends_at_the_first_error_and_drops_the_others() {
    let report = dfs()
        .check(|| {
            let (drops, polls) = (Cell::new(0), Cell::new(0));
            let polled = &polls;
            let log = RefCell::new(String::new());
            let guard = Guard(&drops);
            let pending = async move {
                let _g = guard;
                std::future::poll_fn(|_| {
                    polled.set(polled.get() + 1);
                    Poll::<Result<u8, &str>>::Pending
                })
                .await
            };
            let slow_error = async {
                Recorded {
                    name: 'e',
                    pending: 1,
                    log: &log,
                }
                .await;
                Err::<u8, _>("failed")
            };
            let got = block_on(async { tokio::try_join!(pending, slow_error) });
            assert_eq!(got, Err("failed"));
            // Poll 1 polled both; poll 2 started at the error, which ended the join: the
            // pending future was dropped with no second poll.
            assert_eq!(
                (polls.get(), drops.get(), log.take()),
                (1, 1, "ee".to_owned())
            );

            // With `biased;` and the error first, the other is dropped, never polled.
            let guard = Guard(&drops);
            let never = async move {
                let _g = guard;
                polled.set(100);
                Ok::<u8, &str>(1)
            };
            let got = block_on(async {
                tokio::try_join!(biased; async { Err::<u8, _>("first") }, never)
            });
            assert_eq!((got, polls.get(), drops.get()), (Err("first"), 1, 2));
        })
        .unwrap();
    assert_eq!(report.executions, 1);
}
