//! Helpers of the Tokio tests: run a model under exhaustive DFS on both substrates, poll
//! a future once.

use std::future::Future;
use std::pin::Pin;

use interleave_test::{Builder, Reduction};

use crate::common::{SUBSTRATES, dfs};

/// Runs `model` under exhaustive DFS on both substrates; every execution must pass.
pub(crate) fn every_execution<Fut: Future<Output = ()>>(model: impl Fn() -> Fut + Sync) {
    every_execution_of(|b| b, model);
}

/// [`every_execution`] with the builder changed by `adjust`.
pub(crate) fn every_execution_of<Fut: Future<Output = ()>>(
    adjust: impl Fn(Builder) -> Builder,
    model: impl Fn() -> Fut + Sync,
) {
    for substrate in SUBSTRATES {
        let report = adjust(dfs(substrate, Reduction::Dpor, None))
            .check_async(&model)
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted, "{substrate:?}");
    }
}

/// [`every_execution`] for a synchronous model (threads that call `block_on` themselves).
pub(crate) fn every_execution_sync(model: impl Fn() + Sync) {
    for substrate in SUBSTRATES {
        let report = dfs(substrate, Reduction::Dpor, None)
            .check(&model)
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted, "{substrate:?}");
    }
}

/// Polls `fut` once: whether it completed.
pub(crate) async fn poll_once<F: Future>(fut: Pin<&mut F>) -> bool {
    let mut fut = Some(fut);
    std::future::poll_fn(|cx| {
        let fut = fut.take().expect("polled once");
        std::task::Poll::Ready(fut.poll(cx).is_ready())
    })
    .await
}
