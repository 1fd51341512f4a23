//! What the Tokio examples' `main`s share: find the bug, print its report, replay it from
//! its JSON to an equal failure, then check the fixed model under random and PCT.

use interleave_test::{Builder, Schedule, StrategyKind};

/// Runs the demonstration for the example `name`: `buggy` must fail within 1,000
/// executions (seed 2026) and replay exactly; `fixed` must pass both searches, whose
/// reports are printed after `fixed_label`.
pub(crate) fn find_replay_and_check_fix(name: &str, buggy: fn(), fixed: fn(), fixed_label: &str) {
    let builder = Builder::new().name(name).seed(2026).iterations(1000);
    let failure = match builder.check(buggy) {
        Ok(report) => {
            println!("no failure found: {report}");
            std::process::exit(1);
        }
        Err(failure) => failure,
    };
    println!("{failure}\n");

    let schedule = Schedule::from_json(&failure.schedule().to_json())
        .expect("a schedule reads back from its own JSON");
    let replayed = builder
        .replay(buggy, &schedule)
        .expect_err("the replay fails too");
    assert_eq!(replayed, failure, "the replay reproduces the failure");
    println!(
        "replayed from JSON: the same {} ({} decisions).",
        replayed.kind(),
        schedule.decisions().len()
    );

    // The fixed model, under the same search and under PCT.
    for strategy in [StrategyKind::Random, StrategyKind::Pct { depth: 3 }] {
        let report = builder
            .clone()
            .strategy(strategy)
            .check(fixed)
            .unwrap_or_else(|f| panic!("{fixed_label}: failed: {f}"));
        println!("{fixed_label}: {report}");
    }
}
