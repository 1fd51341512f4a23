//! `choose` and `choose_from`: DFS explores every value (exact class counts), random and PCT
//! draw them from the seed, a failure replays its values, and bad arguments are `Misuse`.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::{
    Builder, DFS_CHOOSE_LIMIT, FailureKind, Reduction, Schedule, StrategyKind, choose, choose_from,
    thread,
};

use crate::common::{SUBSTRATES, dfs, each_dfs, each_sampler};

/// Main spawns a thread; each chooses one of three values and stores it in an atomic of its
/// own; main joins. With `choices` false both store 0 instead (the same operations).
fn two_choices(choices: bool, seen: &StdMutex<BTreeSet<(usize, usize)>>) {
    let (a, b) = (Arc::new(AtomicUsize::new(9)), Arc::new(AtomicUsize::new(9)));
    let a2 = Arc::clone(&a);
    let t = thread::spawn(move || a2.store(if choices { choose(3) } else { 0 }, SeqCst));
    b.store(if choices { choose(3) } else { 0 }, SeqCst);
    t.join().unwrap();
    seen.lock()
        .unwrap()
        .insert((a.load(SeqCst), b.load(SeqCst)));
}

/// With reduction the two threads touch nothing in common: one class of interleavings,
/// times 3 values of each choice, is 3 x 3 = 9 executions. Without reduction every
/// interleaving runs once per pair of values: 9 times the executions of the same model
/// without choices. Every pair is seen, under both substrates.
#[test]
fn two_choices_of_three_in_two_threads_take_nine_classes() {
    for substrate in SUBSTRATES {
        for reduction in [Reduction::Dpor, Reduction::Off] {
            let seen = StdMutex::new(BTreeSet::new());
            let with = dfs(substrate, reduction, None)
                .check(|| two_choices(true, &seen))
                .unwrap();
            let pairs: BTreeSet<_> = (0..3).flat_map(|a| (0..3).map(move |b| (a, b))).collect();
            assert_eq!(*seen.lock().unwrap(), pairs, "{substrate:?} {reduction:?}");
            let without = dfs(substrate, reduction, None)
                .check(|| two_choices(false, &StdMutex::default()))
                .unwrap();
            assert!(with.exhausted, "{with}");
            assert_eq!(
                with.executions,
                9 * without.executions,
                "{with} / {without}"
            );
            if reduction == Reduction::Dpor {
                assert_eq!(with.executions, 9, "{substrate:?}: {with}");
            }
        }
    }
}

/// Two threads choose one of four values each; one pair of values fails.
fn one_bad_pair() {
    let a = Arc::new(AtomicUsize::new(0));
    let a2 = Arc::clone(&a);
    let t = thread::spawn(move || a2.store(choose(4), SeqCst));
    let b = choose(4);
    t.join().unwrap();
    assert!(!(a.load(SeqCst) == 3 && b == 1), "the one bad pair");
}

/// DFS (every configuration) finds the pair; random and PCT find it within 2,000
/// executions (1 in 16 per execution); each failure replays through JSON to an equal one.
#[test]
fn a_bug_of_one_value_pair_is_found_and_replays() {
    let replays = |builder: &Builder, failure: interleave_test::Failure, name: &str| {
        assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
        assert!(failure.message().contains("the one bad pair"), "{name}");
        let picks: Vec<_> = failure
            .schedule()
            .decisions()
            .iter()
            .filter_map(|d| d.pick().filter(|(kind, _)| *kind == "choose"))
            .map(|(_, value)| value)
            .collect();
        assert_eq!(picks.len(), 2, "{name}: {:?}", failure.schedule());
        let schedule = Schedule::from_json(&failure.schedule().to_json()).unwrap();
        let again = builder.replay(one_bad_pair, &schedule).unwrap_err();
        assert_eq!(again, failure, "{name}");
    };
    each_dfs(|builder, name, _| {
        let failure = builder.check(one_bad_pair).unwrap_err();
        replays(&builder, failure, &name);
    });
    each_sampler(7, |builder, name| {
        let failure = builder.check(one_bad_pair).unwrap_err();
        replays(&builder, failure, &name);
    });
}

/// Random and PCT draw the same values from the same seed (one execution at a time, so in
/// the same order), and not always the same ones.
#[test]
fn one_seed_draws_the_same_values() {
    each_sampler(3, |builder, name| {
        let draws = || {
            let seen = StdMutex::new(Vec::new());
            builder
                .clone()
                .iterations(50)
                .parallelism(1)
                .check(|| seen.lock().unwrap().push(choose(1000)))
                .unwrap();
            seen.into_inner().unwrap()
        };
        let first = draws();
        assert_eq!(first, draws(), "{name}");
        assert!(
            first.iter().collect::<BTreeSet<_>>().len() > 40,
            "{name}: {first:?}"
        );
    });
}

/// `choose_from` yields the values of a range or a slice; DFS takes them in order.
#[test]
fn choose_from_takes_every_value_in_order_under_dfs() {
    let seen = StdMutex::new(Vec::new());
    let report = dfs(SUBSTRATES[0], Reduction::Dpor, None)
        .check(|| {
            let n = choose_from(-2..=1i8);
            let word = choose_from(&["x", "y"]);
            let m = choose_from(250..252u8);
            seen.lock().unwrap().push((n, *word, m));
        })
        .unwrap();
    assert_eq!(report.executions, 16, "{report}");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen[..3], [(-2, "x", 250), (-2, "x", 251), (-2, "y", 250)]);
    assert_eq!(seen[15], (1, "y", 251));
    // One value is no decision: the failing schedule records no `choose` pick.
    let values: Vec<u8> = vec![7];
    let failure = Builder::new()
        .check(|| assert_ne!(*choose_from(&values), 7, "the one value"))
        .unwrap_err();
    assert!(failure.message().contains("the one value"), "{failure}");
    let picks = failure.schedule().decisions().iter();
    assert!(
        picks
            .filter_map(|d| d.pick())
            .all(|(kind, _)| kind != "choose")
    );
}

/// What cannot be chosen from is a `Misuse` that says what to do: nothing to choose from,
/// more values than DFS explores (random takes them), a range a `usize` cannot count.
#[test]
fn bad_choices_are_misuse_with_what_to_do() {
    let misuse = |builder: Builder, model: fn(), words: &str| {
        let failure = builder.check(model).unwrap_err();
        assert_eq!(failure.kind(), FailureKind::Misuse, "{failure}");
        assert!(failure.message().contains(words), "{failure}");
    };
    let dfs = || dfs(SUBSTRATES[0], Reduction::Dpor, None);
    misuse(
        dfs(),
        || {
            choose(0);
        },
        "choose(0): there is no value to choose from",
    );
    misuse(
        Builder::new(),
        || {
            choose_from(5..5u32);
        },
        "there is no value to choose from (the range or slice is empty)",
    );
    misuse(
        Builder::new(),
        || {
            choose_from(i64::MIN..=i64::MAX);
        },
        "more values than a usize can count",
    );
    misuse(
        dfs(),
        || {
            choose(DFS_CHOOSE_LIMIT + 1);
        },
        "at most 1024 (interleave_test::DFS_CHOOSE_LIMIT); this one has 1025: narrow it",
    );
    let random = Builder::new().strategy(StrategyKind::Random).iterations(20);
    random
        .check(|| assert!(choose(DFS_CHOOSE_LIMIT + 1) <= DFS_CHOOSE_LIMIT))
        .unwrap();
    // Outside a model a choice takes option 0, as every decision there does.
    assert_eq!(choose(2), 0);
}
