//! The compile errors of `#[interleave]`, pinned: each case under `tests/ui/fail/` must fail
//! with exactly its `.stderr` (message and the span it points at); each under `tests/ui/pass/`
//! must compile. trybuild builds the cases as binaries, not tests, so `#[test]` removes the
//! generated functions before type checking: the pass cases check what the attribute accepts,
//! and `tests/macro_attr.rs` checks that the expansion compiles and runs.
//!
//! To regenerate the `.stderr` files after a deliberate change of a message, run
//! `TRYBUILD=overwrite cargo test --test macro_ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
