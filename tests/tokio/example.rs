//! The connection pool of `examples/connection_pool.rs`: its leak on the timeout path is
//! found by random, PCT and bounded DFS and replays exactly; the guarded pool passes.

use interleave_test::{Builder, FailureKind, Reduction, Substrate};

use crate::common::{dfs, each_sampler, line_of};

#[path = "../../examples/connection_pool.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
#[allow(
    clippy::duplicate_mod,
    reason = "both examples include their shared `main` (examples/support)"
)]
mod connection_pool;

const SOURCE: &str = include_str!("../../examples/connection_pool.rs");

/// Finds the leak with `builder`, checks the report and replays it to an equal failure.
fn finds_the_leak(builder: Builder, name: &str) {
    let failure = match builder.check(connection_pool::leaky_service) {
        Ok(report) => panic!("{name}: not found: {report}"),
        Err(failure) => failure,
    };
    assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
    assert!(
        failure
            .message()
            .contains("a connection was lost: the pool can hand out 0 of its 1"),
        "{name}: {failure}"
    );
    let at = failure.location().expect("a panic has a location");
    // The `assert_eq!` whose message says so.
    let message = line_of(SOURCE, "\"a connection was lost");
    let lines: Vec<&str> = SOURCE.lines().collect();
    let line = (1..message)
        .rev()
        .find(|&l| lines[l as usize - 1].trim() == "assert_eq!(")
        .expect("the assertion");
    assert_eq!(
        (at.file(), at.line()),
        ("tests/tokio/../../examples/connection_pool.rs", line),
        "{name}"
    );
    let again = builder
        .replay(connection_pool::leaky_service, failure.schedule())
        .unwrap_err();
    assert_eq!(again, failure, "{name}: replay differs");
}

#[test]
fn the_pool_leak_on_the_timeout_path_is_found_and_replays() {
    each_sampler(1, |builder, name| finds_the_leak(builder, &name));
    for substrate in [Substrate::Coroutines, Substrate::Threads] {
        finds_the_leak(
            dfs(substrate, Reduction::Dpor, Some(1)),
            &format!("{substrate:?}, dfs bound 1"),
        );
    }
}

#[test]
fn the_guarded_pool_gives_every_connection_back() {
    each_sampler(1, |builder, name| {
        builder
            .iterations(300)
            .check(connection_pool::guarded_service)
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}
