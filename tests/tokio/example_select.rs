//! The `select!` loop of `examples/select_lost_frame.rs`: the byte lost when the heartbeat
//! wins between two receives is found by random, PCT and DFS and replays exactly; the
//! buffered reader passes.

use interleave_test::{Builder, FailureKind, Reduction, Substrate};

use crate::common::{dfs, each_sampler};

#[path = "../../examples/select_lost_frame.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
#[allow(
    clippy::duplicate_mod,
    reason = "both examples include their shared `main` (examples/support)"
)]
mod select_lost_frame;

/// Finds the torn frame with `builder` and replays it to an equal failure.
fn finds_the_torn_frame(builder: Builder, name: &str) {
    let failure = match builder.check(select_lost_frame::unbuffered) {
        Ok(report) => panic!("{name}: not found: {report}"),
        Err(failure) => failure,
    };
    assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
    assert!(
        failure.message().contains("a frame was lost or torn"),
        "{name}: {failure}"
    );
    let again = builder
        .replay(select_lost_frame::unbuffered, failure.schedule())
        .unwrap_err();
    assert_eq!(again, failure, "{name}: replay differs");
}

#[test]
fn the_byte_lost_to_the_heartbeat_is_found_and_replays() {
    each_sampler(1, |builder, name| finds_the_torn_frame(builder, &name));
    for substrate in [Substrate::Coroutines, Substrate::Threads] {
        for bound in [Some(1), None] {
            finds_the_torn_frame(
                dfs(substrate, Reduction::Dpor, bound),
                &format!("{substrate:?}, dfs bound {bound:?}"),
            );
        }
    }
}

#[test]
fn the_buffered_reader_loses_nothing() {
    each_sampler(1, |builder, name| {
        builder
            .iterations(300)
            .check(select_lost_frame::buffered)
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}
