//! End to end, the one-line Tokio switch: the fixture `tests/fixtures/tokio_switch_fixture`
//! (a token cache and a dispatcher written against `tokio`, whose `tokio` dependency is
//! `interleave-tokio`) builds and passes its `#[tokio::test]`s on Tokio itself without the
//! cfg and in the model with it, with no warning in either build and no `use` of
//! interleave-test in its code; with its injected bug (a refresh not marked under way) the
//! model finds two tokens issued. Its test compares a `Vec<u32>` with `vec![]`, which
//! stopped compiling when the crate depended on serde_json (whose `impl PartialEq<Value>
//! for u32` reaches every crate that links it; the crate now has its own
//! `protocol::json`).
//!
//! The copy builds in the same directory and with the same flags as the other fixtures, so
//! they share one build of interleave-test. The test runs cargo, so the substrate of this
//! process does not matter: it sits in `own_substrates`.

mod common;

use std::path::Path;

use common::fixture::{self, cargo_test};

/// The fixture's warnings in `out`: cargo's summary line names the package.
fn warned(out: &str) -> bool {
    out.lines()
        .any(|l| l.starts_with("warning: `tokio-switch-fixture`"))
}

mod own_substrates {
    use super::*;

    #[test]
    fn one_line_switches_a_tokio_crate_and_the_model_finds_its_bug() {
        let dest = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tokio-switch-fixture");
        let root = fixture::copy("tokio_switch_fixture", &dest);
        let tests = [
            "callers_share_one_token",
            "every_answered_request_is_doubled",
        ];

        let (code, out) = cargo_test(&root, false, &["--lib"]);
        assert_eq!(code, Some(0), "{out}");
        assert!(!warned(&out), "Tokio build: {out}");
        assert!(
            !out.contains("Compiling interleave-test"),
            "Tokio only: {out}"
        );
        for test in tests {
            assert!(out.contains(&format!("test tests::{test} ... ok")), "{out}");
        }

        let (code, out) = cargo_test(&root, true, &["--lib"]);
        assert_eq!(code, Some(0), "{out}");
        assert!(!warned(&out), "model build: {out}");
        for test in tests {
            assert!(out.contains(&format!("test tests::{test} ... ok")), "{out}");
        }

        let (code, out) = cargo_test(&root, true, &["--lib", "--features", "bug"]);
        assert_eq!(code, Some(101), "{out}");
        assert!(
            out.contains("test tests::callers_share_one_token ... FAILED"),
            "{out}"
        );
        assert!(out.contains("interleave-test found a panic"), "{out}");
        assert!(
            out.contains("in thread 'main' (#0) at src/lib.rs:"),
            "{out}"
        );
        assert!(
            out.contains("test tests::every_answered_request_is_doubled ... ok"),
            "{out}"
        );
    }
}
