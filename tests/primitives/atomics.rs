//! `sync::atomic`: races on atomics are found, every method gives std's result, orderings are
//! validated as std validates them, and misuse is reported.

use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic as real;

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{
    AtomicBool, AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicPtr, AtomicU8,
    AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering, compiler_fence, fence,
};
use interleave_test::{Builder, Failure, FailureKind, thread};

const ORDERINGS: [Ordering; 5] = [
    Ordering::Relaxed,
    Ordering::Release,
    Ordering::Acquire,
    Ordering::AcqRel,
    Ordering::SeqCst,
];

/// Runs `model` once and fails the test with the formatted failure if it fails. Spurious
/// failures of `compare_exchange_weak` are off: the model compares with std's atomics,
/// which do not fail spuriously on this machine.
fn run_once(model: impl Fn() + Sync) {
    let builder = Builder::new().seed(1).iterations(1).spurious_wakeups(false);
    if let Err(failure) = builder.check(model) {
        panic!("{failure}");
    }
}

/// Runs `model` once and returns its failure, if any.
fn failure_of(model: impl Fn() + Sync) -> Option<Failure> {
    Builder::new().seed(1).iterations(1).check(model).err()
}

/// Whether `f` panics (std's atomics, outside any model).
fn std_panics(f: impl FnOnce()) -> bool {
    panic::catch_unwind(AssertUnwindSafe(f)).is_err()
}

/// Two threads increment with a separate load and store; some schedule loses an update, and
/// the failure names the main thread at the assert.
#[test]
fn lost_update_is_found_at_the_assert() {
    let model = || {
        let hits = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let hits = Arc::clone(&hits);
                thread::spawn(move || {
                    let seen = hits.load(Ordering::SeqCst);
                    hits.store(seen + 1, Ordering::SeqCst);
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(hits.load(Ordering::SeqCst), 2, "an update was lost");
    };
    let assert_line = line!() - 2; // the `assert_eq!` two lines up
    let failure = Builder::new()
        .seed(21)
        .iterations(1000)
        .check(model)
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Panic);
    let thread = failure.thread().expect("a panic names its thread");
    assert_eq!((thread.id(), thread.name()), (0, Some("main")));
    let location = failure.location().expect("a panic has a location");
    assert_eq!(location.line(), assert_line);
    assert!(
        location.file().ends_with("atomics.rs"),
        "{}",
        location.file()
    );
    assert!(
        failure.message().contains("an update was lost"),
        "{}",
        failure.message()
    );
    // The decisive preemption is between a load and a store, and the schedule says so.
    let ops: Vec<&str> = failure
        .schedule()
        .decisions()
        .iter()
        .map(|d| d.op())
        .collect();
    assert!(ops.iter().any(|op| op.starts_with("atomic ")), "{ops:?}");
}

/// The same increment with `fetch_add` cannot lose an update.
#[test]
fn fetch_add_never_loses_an_update() {
    let report = Builder::new()
        .seed(22)
        .iterations(10_000)
        .check(|| {
            let hits = Arc::new(AtomicUsize::new(0));
            let hits2 = Arc::clone(&hits);
            let t = thread::spawn(move || {
                hits2.fetch_add(1, Ordering::SeqCst);
            });
            hits.fetch_add(1, Ordering::SeqCst);
            t.join().unwrap();
            assert_eq!(hits.load(Ordering::SeqCst), 2);
        })
        .unwrap();
    assert_eq!(report.executions, 10_000);
}

/// Runs one call on a fresh pair (ours, std's) from `$fresh` and compares the results and the
/// values left behind; `$ctx` is shown on a mismatch. The short form calls the same method on
/// both; the long form names each side's expression.
macro_rules! same {
    ($fresh:ident, $ctx:expr, $o:ident => $ours:expr, $s:ident => $std:expr) => {{
        let ($o, $s) = $fresh();
        let what = format!("{} on {:?}", stringify!($ours), $ctx);
        assert_eq!($ours, $std, "{what}");
        assert_eq!($o.load(Ordering::SeqCst), $s.load(Ordering::SeqCst), "after {what}");
    }};
    ($fresh:ident, $ctx:expr, $op:ident($($arg:expr),*)) => {
        same!($fresh, $ctx, o => o.$op($($arg),*), s => s.$op($($arg),*))
    };
}

/// The methods every atomic type has, on fresh pairs holding `$a`, with operand `$b`; `$f`
/// may decline to update, `$g` may not.
macro_rules! same_common {
    ($fresh:ident, $a:ident, $b:ident, $f:ident, $g:ident) => {{
        let ctx = ($a, $b);
        same!($fresh, ctx, swap($b, Ordering::AcqRel));
        same!($fresh, ctx, store($b, Ordering::Release));
        for current in [$a, $b] {
            let ctx = (ctx, current);
            same!($fresh, ctx, compare_exchange(current, $b, Ordering::AcqRel, Ordering::Acquire));
            // std's weak exchange may fail spuriously; ours never does, so compare it with
            // std's strong one.
            same!(
                $fresh, ctx,
                o => o.compare_exchange_weak(current, $b, Ordering::SeqCst, Ordering::Relaxed),
                s => s.compare_exchange(current, $b, Ordering::SeqCst, Ordering::Relaxed)
            );
            #[allow(deprecated)]
            {
                same!($fresh, ctx, compare_and_swap(current, $b, Ordering::Release));
            }
        }
        let (relaxed, seq_cst) = (Ordering::Relaxed, Ordering::SeqCst);
        same!($fresh, ctx, fetch_update(seq_cst, Ordering::Acquire, $f));
        same!(
            $fresh, ctx,
            o => o.try_update(Ordering::Release, seq_cst, $f),
            s => s.fetch_update(seq_cst, seq_cst, $f)
        );
        same!(
            $fresh, ctx,
            o => o.update(relaxed, relaxed, $g),
            s => s.fetch_update(seq_cst, seq_cst, |x| Some($g(x))).unwrap()
        );
        let (mut ours, mut std) = $fresh();
        *ours.get_mut() = $b;
        *std.get_mut() = $b;
        assert_eq!(format!("{ours:?}"), format!("{std:?}"));
        assert_eq!(ours.into_inner(), std.into_inner());
    }};
}

/// Compares every method of `$ours` with std's type of the same name on pairs of
/// interesting values, on a single model thread.
macro_rules! int_matches_std {
    ($test:ident, $ours:ident, $t:ty) => {
        #[test]
        fn $test() {
            let zero: $t = 0;
            let samples: [$t; 9] = [
                0,
                1,
                2,
                7,
                <$t>::MAX,
                <$t>::MIN,
                <$t>::MAX / 2,
                zero.wrapping_sub(1),
                zero.wrapping_sub(7),
            ];
            run_once(|| {
                for a in samples {
                    let fresh = || ($ours::new(a), real::$ours::new(a));
                    for b in samples {
                        let f = |x: $t| (x % 3 != 0).then(|| x.wrapping_mul(3).wrapping_add(b));
                        let g = |x: $t| x.wrapping_mul(3).wrapping_add(b);
                        same_common!(fresh, a, b, f, g);
                        let ctx = (a, b);
                        same!(fresh, ctx, fetch_add(b, Ordering::Relaxed));
                        same!(fresh, ctx, fetch_sub(b, Ordering::Release));
                        same!(fresh, ctx, fetch_and(b, Ordering::Acquire));
                        same!(fresh, ctx, fetch_nand(b, Ordering::SeqCst));
                        same!(fresh, ctx, fetch_or(b, Ordering::AcqRel));
                        same!(fresh, ctx, fetch_xor(b, Ordering::Relaxed));
                        same!(fresh, ctx, fetch_max(b, Ordering::SeqCst));
                        same!(fresh, ctx, fetch_min(b, Ordering::SeqCst));
                    }
                    assert_eq!(
                        $ours::from(a).into_inner(),
                        real::$ours::from(a).into_inner()
                    );
                }
                assert_eq!(
                    $ours::default().into_inner(),
                    real::$ours::default().into_inner()
                );
            });
        }
    };
}

int_matches_std!(usize_matches_std, AtomicUsize, usize);
int_matches_std!(i32_matches_std, AtomicI32, i32);
int_matches_std!(i8_matches_std, AtomicI8, i8);
int_matches_std!(i16_matches_std, AtomicI16, i16);
int_matches_std!(i64_matches_std, AtomicI64, i64);
int_matches_std!(isize_matches_std, AtomicIsize, isize);
int_matches_std!(u8_matches_std, AtomicU8, u8);
int_matches_std!(u16_matches_std, AtomicU16, u16);
int_matches_std!(u32_matches_std, AtomicU32, u32);
int_matches_std!(u64_matches_std, AtomicU64, u64);

#[test]
fn bool_matches_std() {
    run_once(|| {
        for a in [false, true] {
            let fresh = || (AtomicBool::new(a), real::AtomicBool::new(a));
            same!(fresh, a, fetch_not(Ordering::Relaxed));
            for b in [false, true] {
                let f = |x: bool| x.then_some(b);
                let g = |x: bool| x ^ b;
                same_common!(fresh, a, b, f, g);
                let ctx = (a, b);
                same!(fresh, ctx, fetch_and(b, Ordering::Acquire));
                same!(fresh, ctx, fetch_nand(b, Ordering::Release));
                same!(fresh, ctx, fetch_or(b, Ordering::AcqRel));
                same!(fresh, ctx, fetch_xor(b, Ordering::Relaxed));
            }
            assert_eq!(
                AtomicBool::from(a).into_inner(),
                real::AtomicBool::from(a).into_inner()
            );
        }
        assert_eq!(
            AtomicBool::default().into_inner(),
            real::AtomicBool::default().into_inner()
        );
    });
}

#[test]
fn ptr_matches_std() {
    run_once(|| {
        let mut buf = [0u64; 4];
        let base = buf.as_mut_ptr();
        let samples = [
            base,
            base.wrapping_add(1),
            base.wrapping_add(3),
            std::ptr::null_mut(),
        ];
        for a in samples {
            let fresh = || (AtomicPtr::new(a), real::AtomicPtr::new(a));
            for b in samples {
                let f = |p: *mut u64| (!p.is_null()).then_some(b);
                let g = |p: *mut u64| if p.is_null() { b } else { p.wrapping_add(1) };
                same_common!(fresh, a, b, f, g);
                let (ours, std) = fresh();
                assert_eq!(format!("{ours:p}"), format!("{std:p}"));
            }
            assert_eq!(
                AtomicPtr::from(a).into_inner(),
                real::AtomicPtr::from(a).into_inner()
            );
        }
        assert_eq!(
            AtomicPtr::<u64>::default().into_inner(),
            real::AtomicPtr::<u64>::default().into_inner()
        );
    });
}

/// The pointer arithmetic methods return the previous pointer and move it as the pointer
/// methods of the same name do (compared with the pointer methods rather than std's atomic
/// ones, which need a newer Rust than this crate's minimum).
#[test]
fn ptr_arithmetic_moves_the_pointer() {
    run_once(|| {
        let mut buf = [0u64; 4];
        let base = buf.as_mut_ptr();
        type Step = (
            fn(&AtomicPtr<u64>, usize) -> *mut u64,
            fn(*mut u64, usize) -> *mut u64,
        );
        let steps: [(&str, Step); 7] = [
            (
                "fetch_ptr_add",
                (
                    |x, v| x.fetch_ptr_add(v, Ordering::SeqCst),
                    |p, v| p.wrapping_add(v),
                ),
            ),
            (
                "fetch_ptr_sub",
                (
                    |x, v| x.fetch_ptr_sub(v, Ordering::Relaxed),
                    |p, v| p.wrapping_sub(v),
                ),
            ),
            (
                "fetch_byte_add",
                (
                    |x, v| x.fetch_byte_add(v, Ordering::AcqRel),
                    |p, v| p.wrapping_byte_add(v),
                ),
            ),
            (
                "fetch_byte_sub",
                (
                    |x, v| x.fetch_byte_sub(v, Ordering::Acquire),
                    |p, v| p.wrapping_byte_sub(v),
                ),
            ),
            (
                "fetch_or",
                (
                    |x, v| x.fetch_or(v, Ordering::Release),
                    |p, v| p.map_addr(|a| a | v),
                ),
            ),
            (
                "fetch_and",
                (
                    |x, v| x.fetch_and(v, Ordering::SeqCst),
                    |p, v| p.map_addr(|a| a & v),
                ),
            ),
            (
                "fetch_xor",
                (
                    |x, v| x.fetch_xor(v, Ordering::SeqCst),
                    |p, v| p.map_addr(|a| a ^ v),
                ),
            ),
        ];
        for start in [base, base.wrapping_add(2)] {
            for v in [0usize, 1, 2, 3, 8, usize::MAX] {
                for (name, (ours, expected)) in steps {
                    let x = AtomicPtr::new(start);
                    assert_eq!(
                        ours(&x, v),
                        start,
                        "{name}({v}) returns the previous pointer"
                    );
                    assert_eq!(x.load(Ordering::SeqCst), expected(start, v), "{name}({v})");
                }
            }
        }
    });
}

/// Each ordering that std rejects panics here too, at the caller's line, and every ordering
/// that std accepts is accepted.
#[test]
fn orderings_are_validated_as_std_does() {
    for order in ORDERINGS {
        let std_load = std_panics(|| {
            real::AtomicUsize::new(0).load(order);
        });
        let ours = failure_of(|| {
            AtomicUsize::new(0).load(order);
        });
        assert_eq!(ours.is_some(), std_load, "load({order:?})");
        let std_store = std_panics(|| real::AtomicI32::new(0).store(1, order));
        let ours = failure_of(|| AtomicI32::new(0).store(1, order));
        assert_eq!(ours.is_some(), std_store, "store({order:?})");
        let std_fence = std_panics(|| real::fence(order));
        assert_eq!(
            failure_of(|| fence(order)).is_some(),
            std_fence,
            "fence({order:?})"
        );
        let std_compiler_fence = std_panics(|| real::compiler_fence(order));
        assert_eq!(
            std_panics(|| compiler_fence(order)),
            std_compiler_fence,
            "compiler_fence({order:?})"
        );
        for failure in ORDERINGS {
            let std_cas = std_panics(|| {
                let _ = real::AtomicBool::new(false).compare_exchange(false, true, order, failure);
            });
            let ours = failure_of(|| {
                let _ = AtomicBool::new(false).compare_exchange(false, true, order, failure);
            });
            assert_eq!(
                ours.is_some(),
                std_cas,
                "compare_exchange({order:?}, {failure:?})"
            );
            let ours = failure_of(|| {
                let _ = AtomicBool::new(false).compare_exchange_weak(false, true, order, failure);
            });
            assert_eq!(
                ours.is_some(),
                std_cas,
                "compare_exchange_weak({order:?}, {failure:?})"
            );
            let std_update = std_panics(|| {
                let _ = real::AtomicUsize::new(0).fetch_update(order, failure, |v| Some(v + 1));
            });
            let ours = failure_of(|| {
                let _ = AtomicUsize::new(0).fetch_update(order, failure, |v| Some(v + 1));
            });
            assert_eq!(
                ours.is_some(),
                std_update,
                "fetch_update({order:?}, {failure:?})"
            );
        }
    }
}

/// A rejected ordering is reported as a panic at the user's line, naming the method.
#[test]
fn rejected_ordering_points_at_the_caller() {
    use Ordering::{AcqRel, Relaxed, Release, SeqCst};
    /// The line of the `case!` and a model that makes the call written on it.
    macro_rules! case {
        ($call:expr) => {
            (
                line!(),
                Box::new(move || {
                    let _ = $call;
                }) as Box<dyn Fn() + Sync>,
            )
        };
    }
    let cases = [
        case!(AtomicU64::new(0).load(Release)),
        case!(AtomicPtr::new(std::ptr::null_mut::<u8>()).store(std::ptr::null_mut(), AcqRel)),
        case!(AtomicBool::new(true).compare_exchange(true, false, SeqCst, Release)),
        case!(fence(Relaxed)),
    ];
    let messages = [
        "AtomicU64::load: there is no such thing as a release load",
        "AtomicPtr::store: there is no such thing as an acquire-release store",
        "AtomicBool::compare_exchange: there is no such thing as a release failure ordering",
        "atomic::fence: there is no such thing as a relaxed fence",
    ];
    for ((line, model), message) in cases.into_iter().zip(messages) {
        let failure = failure_of(model).expect("a rejected ordering panics");
        assert_eq!(failure.kind(), FailureKind::Panic);
        assert!(failure.message().contains(message), "{}", failure.message());
        let location = failure.location().expect("a panic has a location");
        assert_eq!(location.line(), line, "{message}");
    }
}

/// Two threads race a `fetch_max` and a `compare_exchange` each; the results over many
/// executions are exactly those of the 6 interleavings of their two operations each.
#[test]
fn fetch_max_and_compare_exchange_outcomes() {
    type Outcome = (
        usize,
        Result<usize, usize>,
        Result<usize, usize>,
        usize,
        usize,
    );
    let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::<Outcome>::new()));
    let sink = std::sync::Arc::clone(&seen);
    Builder::new()
        .seed(23)
        .iterations(2_000)
        .check(move || {
            let x = Arc::new(AtomicUsize::new(0));
            let x1 = Arc::clone(&x);
            let t1 = thread::spawn(move || {
                let a = x1.fetch_max(2, Ordering::SeqCst);
                let b = x1.compare_exchange(2, 5, Ordering::SeqCst, Ordering::SeqCst);
                (a, b)
            });
            let x2 = Arc::clone(&x);
            let t2 = thread::spawn(move || {
                let c = x2.compare_exchange(0, 3, Ordering::AcqRel, Ordering::Acquire);
                let d = x2.fetch_max(4, Ordering::Relaxed);
                (c, d)
            });
            let (a, b) = t1.join().unwrap();
            let (c, d) = t2.join().unwrap();
            sink.lock()
                .unwrap()
                .insert((a, b, c, d, x.load(Ordering::SeqCst)));
        })
        .unwrap();
    // T1: A1 = fetch_max(2), A2 = compare_exchange(2, 5); T2: B1 = compare_exchange(0, 3),
    // B2 = fetch_max(4). From x = 0, each of the C(4, 2) = 6 orders gives (a, b, c, d, final):
    let expected: BTreeSet<Outcome> = [
        (0, Ok(2), Err(5), 5, 5),  // A1 A2 B1 B2: x 0→2→5, B1 sees 5, max(5, 4) = 5
        (0, Ok(2), Err(2), 5, 5),  // A1 B1 A2 B2: B1 sees 2, A2 2→5, B2 keeps 5
        (0, Err(4), Err(2), 2, 4), // A1 B1 B2 A2: B2 raises 2 to 4, A2 sees 4
        (3, Err(3), Ok(0), 3, 4),  // B1 A1 A2 B2: 0→3, max(3, 2) = 3, A2 sees 3, B2 3→4
        (3, Err(4), Ok(0), 3, 4),  // B1 A1 B2 A2: 0→3, A1 sees 3, B2 3→4, A2 sees 4
        (4, Err(4), Ok(0), 3, 4),  // B1 B2 A1 A2: 0→3→4, A1 sees 4, A2 sees 4
    ]
    .into_iter()
    .collect();
    assert_eq!(*seen.lock().unwrap(), expected);
}

/// `fetch_update` is a load and an exchange with a switch point between them: when the
/// other thread gets in between, the closure runs again, as on real hardware.
#[test]
fn fetch_update_retries_when_another_thread_gets_in_between() {
    let calls_seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let sink = std::sync::Arc::clone(&calls_seen);
    Builder::new()
        .seed(24)
        .iterations(2_000)
        .spurious_wakeups(false) // spurious failures would add calls
        .check(move || {
            let x = Arc::new(AtomicU32::new(0));
            let calls = std::sync::Arc::new(real::AtomicUsize::new(0));
            let bump = {
                let (x, calls) = (Arc::clone(&x), std::sync::Arc::clone(&calls));
                move || {
                    x.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
                        calls.fetch_add(1, real::Ordering::Relaxed);
                        Some(v + 1)
                    })
                }
            };
            let t = thread::spawn(bump.clone());
            let mine = bump();
            let theirs = t.join().unwrap();
            // Each saw a different previous value, and both increments landed.
            let mut prevs = [mine.unwrap(), theirs.unwrap()];
            prevs.sort_unstable();
            assert_eq!(prevs, [0, 1]);
            assert_eq!(x.load(Ordering::SeqCst), 2);
            sink.lock()
                .unwrap()
                .insert(calls.load(real::Ordering::Relaxed));
        })
        .unwrap();
    // 2 calls without interference; 3 when one thread's exchange fails once. A second failure
    // is impossible: the thread that got in between has finished its update.
    assert_eq!(*calls_seen.lock().unwrap(), BTreeSet::from([2, 3]));
}

/// Outside a model an atomic is std's own: each operation acts on the value it holds,
/// with no switch point; `fence` is std's. (Before, they panicked there.)
#[test]
fn use_outside_a_model_is_std_s_own() {
    let x = AtomicUsize::new(1);
    let flag = AtomicBool::new(false);
    assert_eq!(x.load(Ordering::SeqCst), 1);
    assert_eq!(x.fetch_add(1, Ordering::SeqCst), 1);
    assert_eq!(
        x.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(v + 1)),
        Ok(2)
    );
    assert_eq!(
        flag.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst),
        Ok(false)
    );
    fence(Ordering::SeqCst);
    assert!(flag.load(Ordering::Relaxed));
    let mut x = x;
    *x.get_mut() += 1;
    assert_eq!(x.into_inner(), 4);
}
