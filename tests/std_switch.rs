//! End to end, the `cfg` switch through the companion crate `interleave-std`: the fixture
//! `tests/fixtures/spsc_fixture` (an SPSC queue written once against `interleave_std`)
//! builds and passes its test on std's threads without the cfg and in the model with it
//! (every class of schedules explored), and with its injected bug (a `Relaxed`
//! publication) the model reports the data race. `interleave-std`'s auto-trait assertions
//! (`interleave-std/tests/auto_traits.rs`) are compiled and run in both builds too.
//!
//! The copy builds in the same directory and with the same flags as `replay_e2e.rs`'s
//! fixture, so the two share one build of interleave-test. The test runs cargo, so the
//! substrate of this process does not matter: it sits in `own_substrates`.

mod common;

use std::path::{Path, PathBuf};

use common::fixture::{self, cargo_test};

/// A copy of the fixture with interleave-std's auto-trait tests beside its own.
fn copy() -> PathBuf {
    let dest = Path::new(env!("CARGO_TARGET_TMPDIR")).join("spsc-fixture");
    let root = fixture::copy("spsc_fixture", &dest);
    let traits = fixture::repo().join("interleave-std/tests/auto_traits.rs");
    std::fs::copy(traits, root.join("tests/auto_traits.rs")).unwrap();
    root
}

mod own_substrates {
    use super::*;

    #[test]
    fn one_source_passes_on_std_and_in_the_model_and_the_model_finds_the_bug() {
        let root = copy();

        let (code, out) = cargo_test(&root, false, &["--", "--nocapture"]);
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("test on_std_threads ... ok"), "{out}");
        assert!(!out.contains("in_the_model"), "{out}");
        assert!(
            out.contains("test the_cell_is_send_but_not_sync_as_stds ... ok"),
            "{out}"
        );
        assert!(
            !out.contains("Compiling interleave-test"),
            "std only: {out}"
        );

        let (code, out) = cargo_test(&root, true, &["--", "--nocapture"]);
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("test in_the_model ... ok"), "{out}");
        assert!(!out.contains("on_std_threads"), "{out}");
        assert!(
            out.contains("test the_cell_is_send_but_not_sync_as_stds ... ok"),
            "{out}"
        );
        let proof = out.lines().find(|l| l.contains("classes of schedules"));
        assert!(
            proof.is_some_and(|l| l.contains("explored") && l.contains("no failure")),
            "{out}"
        );

        let (code, out) = cargo_test(&root, true, &["--features", "bug", "--test", "spsc"]);
        assert_eq!(code, Some(101), "{out}");
        assert!(out.contains("data race on UnsafeCell"), "{out}");
        assert!(
            out.contains("src/lib.rs:"),
            "the cell's accesses are located: {out}"
        );
        assert!(out.contains("test in_the_model ... FAILED"), "{out}");
    }
}
