//! Side-by-side benchmarks of interleave-test against its peers, shuttle 0.9.10 (and
//! shuttle-tokio, its Tokio fork) and loom 0.7.3, on models written once for every tool.
//!
//! The benchmarks are this crate's `benches/` targets; this library is empty. They live in
//! a workspace member of their own so that the peers are dependencies of this crate only:
//! building interleave-test, its examples or its tests compiles none of them. They use
//! interleave-test's public API only, as a user's crate would.
//!
//! Run them from the repository root (this crate is a default member of the workspace),
//! e.g. `cargo bench --bench strategies`; `INTERLEAVE_BENCH_QUICK=1` gives a short smoke
//! run. `benches/README.md` lists the targets and the latest figures.

#![forbid(unsafe_code)]
