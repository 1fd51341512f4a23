//! The compile errors of `#[interleave]`, pinned: each case under `tests/ui/fail/` must fail
//! with exactly its `.stderr` (message and the span it points at); each under `tests/ui/pass/`
//! must compile. trybuild builds the cases as binaries, not tests, so `#[test]` removes the
//! generated functions before type checking: the pass cases check what the attribute accepts,
//! and the root package's `tests/macro_attr.rs` checks that the expansion compiles and runs.
//!
//! These tests live in the macros crate, not the root package, because trybuild builds its
//! cases with every dev-dependency of the package it runs in: here that is only
//! `interleave-test` (which the expansion calls), not the root's loom, shuttle and proptest.
//!
//! To regenerate the `.stderr` files after a deliberate change of a message, run
//! `TRYBUILD=overwrite cargo test -p interleave-test-macros --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
