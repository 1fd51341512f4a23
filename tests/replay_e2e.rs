//! End to end, as a user of the README's `cfg` way: the fixture crate `tests/fixtures/
//! loop_fixture` (modelled primitives under `--cfg interleave`, a test inside a module, one
//! behind a feature) is built with `RUSTFLAGS="--cfg interleave" cargo test --release`; its
//! test fails, and each command the failure prints, typed into a shell at the crate root,
//! replays it; `cargo interleave` does so from another directory with `--manifest-path`;
//! with `INTERLEAVE_REPLAY` exported the other tests still explore. Then the bug is fixed in
//! three ways (fixed), the test rewritten (diverged), unrelated code edited (still fails).
//!
//! The copies build in `target/loop-fixture`: the first run compiles interleave-test once
//! more, optimized (a minute or two); later runs only the fixture. The test runs cargo, so
//! the substrate of this process does not matter: it sits in `own_substrates`, which CI's
//! second pass (on OS threads) skips.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

use common::fixture;

/// The test that fails, by its libtest name and its full path.
const TEST: &str = "model::publish_then_read";
const FULL: &str = "loop_fixture::model::publish_then_read";
/// Its failure, as `cargo interleave` prints it.
const FAILURE: &str = "panic: assertion `left == right` failed: read before it was written";
/// The README's command, run at the crate root.
const CARGO_TEST: &str = "RUSTFLAGS=\"--cfg interleave\" cargo test --release";

/// A copy of the fixture and the shell commands run in it.
struct Fixture {
    root: PathBuf,
    /// The fixture's `src/lib.rs` as committed.
    lib: String,
    /// Held while the copy is in use: copies of one package in one target directory share
    /// their artifacts' names (cargo hashes a package's path relative to its workspace), so
    /// two built at once would run each other's binaries.
    _alone: MutexGuard<'static, ()>,
}

impl Fixture {
    fn new(name: &str) -> Self {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dest = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("loop-fixture")
            .join(name);
        let root = fixture::copy("loop_fixture", &dest);
        let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
        Fixture {
            root,
            lib,
            _alone: alone,
        }
    }

    /// Runs `command` with `sh -c` in `dir`, as a user's shell would: `cargo-interleave` on
    /// the `PATH`, the shared target directory, and none of this process's settings.
    fn sh_in(&self, dir: &Path, command: &str) -> (Option<i32>, String) {
        let bin = Path::new(env!("CARGO_BIN_EXE_cargo-interleave"));
        let path = std::env::join_paths(
            std::iter::once(bin.parent().unwrap().to_owned())
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", command])
            .current_dir(dir)
            .env("PATH", path)
            .env("CARGO_TARGET_DIR", target_dir())
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("INTERLEAVE_") {
                cmd.env_remove(var);
            }
        }
        let out: Output = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    }

    /// Runs `command` at the crate root.
    fn sh(&self, command: &str) -> (Option<i32>, String) {
        self.sh_in(&self.root, command)
    }

    /// Writes `src/lib.rs`: the committed one with each `from` replaced by its `to`.
    fn edit<A: AsRef<str>, B: AsRef<str>>(&self, edits: &[(A, B)]) {
        let mut text = self.lib.clone();
        for (from, to) in edits {
            let (from, to) = (from.as_ref(), to.as_ref());
            assert!(text.contains(from), "the fixture changed: no {from:?}");
            text = text.replace(from, to);
        }
        std::fs::write(self.root.join("src/lib.rs"), text).unwrap();
    }
}

/// `target/loop-fixture` under this repository's target directory.
fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap().join("loop-fixture")
}

/// The file a failure's message says its schedule is stored in, for test `name`.
fn stored_in(output: &str, name: &str) -> String {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("the schedule is stored in "))
        .map(|l| l.split(" (commit it").next().unwrap().to_owned())
        .find(|p| p.contains(name))
        .unwrap_or_else(|| panic!("no schedule of {name} stored in:\n{output}"))
}

/// The number of classes a summary line of test `name` says its search explored.
fn classes(output: &str, name: &str) -> u64 {
    let line = output
        .lines()
        .find(|l| l.starts_with(&format!("interleave-test: {name}: dfs: all ")))
        .unwrap_or_else(|| panic!("no summary of {name} in:\n{output}"));
    let count = line.split("dfs: all ").nth(1).unwrap();
    count
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

mod own_substrates {
    use super::*;

    /// The failure, each printed command, the CLI from elsewhere, an exported replay, and a
    /// feature-gated test.
    #[test]
    fn printed_commands_replay_the_failure_verbatim() {
        let f = Fixture::new("commands");
        let (code, out) = f.sh(CARGO_TEST);
        assert_eq!(code, Some(101), "{out}");
        assert!(out.contains("read before it was written"), "{out}");
        let file = stored_in(&out, "publish_then_read");
        let printed = [
            format!("replay it: cargo interleave replay {file}"),
            format!("or: INTERLEAVE_REPLAY={file} {CARGO_TEST} -- --exact {TEST}"),
        ];
        for line in &printed {
            assert!(out.contains(line.as_str()), "{line}\nnot in\n{out}");
        }
        let commands = printed.map(|l| l.split_once(": ").unwrap().1.to_owned());

        // `cargo interleave` builds as the file records: the same flags as the user's build,
        // so it compiles nothing again.
        let (code, out) = f.sh(&commands[0]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("FAILS   {file}  {FAILURE}")), "{out}");
        assert!(
            !out.contains("Compiling interleave-test"),
            "rebuilt:\n{out}"
        );
        let (code, out) = f.sh(&commands[1]);
        assert_eq!(code, Some(101), "{out}");
        let replayed = format!("this failure was recorded in {file}, and still happens");
        assert!(out.contains(&replayed), "{out}");

        // From the parent directory, naming the crate.
        let parent = f.root.parent().unwrap();
        let manifest = f.root.join("Cargo.toml");
        let elsewhere = format!(
            "cargo interleave replay --manifest-path {} {file}",
            manifest.display()
        );
        let (code, out) = f.sh_in(parent, &elsewhere);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("FAILS   {file}  {FAILURE}")), "{out}");

        exported_replay_leaves_other_tests_exploring(&f, &file);
        a_feature_gated_test_replays_with_its_feature(&f);
    }

    /// With `INTERLEAVE_REPLAY` exported, the passing test explores as many classes as
    /// without it.
    fn exported_replay_leaves_other_tests_exploring(f: &Fixture, file: &str) {
        let passing = "loop_fixture::model::increments_are_counted";
        let (code, alone) = f.sh(&format!(
            "INTERLEAVE_SUMMARY=1 {CARGO_TEST} -- increments_are_counted"
        ));
        assert_eq!(code, Some(0), "{alone}");
        let (code, out) = f.sh(&format!(
            "export INTERLEAVE_REPLAY={file} INTERLEAVE_SUMMARY=1; {CARGO_TEST}"
        ));
        assert_eq!(code, Some(101), "the replayed test fails:\n{out}");
        let expected = classes(&alone, passing);
        assert!(expected >= 2, "{alone}");
        assert_eq!(classes(&out, passing), expected, "{out}");
    }

    /// A test behind a feature: its failure says how to add it; without it the CLI says the
    /// test is missing and why, with it the failure replays.
    fn a_feature_gated_test_replays_with_its_feature(f: &Fixture) {
        let (code, out) = f.sh(&format!("{CARGO_TEST} --features extra"));
        assert_eq!(code, Some(101), "{out}");
        let file = stored_in(&out, "two_readers");
        assert!(
            out.contains("add --features <F> after `replay` or `test`"),
            "{out}"
        );
        let (code, out) = f.sh(&format!("cargo interleave replay {file}"));
        assert_eq!(code, Some(1), "{out}");
        let missing = format!(
            "missing {file}: no test named loop_fixture::model::two_readers in this package (a \
             test behind a feature needs it named: --features <F>)"
        );
        assert!(out.contains(&missing), "{out}");
        let (code, out) = f.sh(&format!("cargo interleave replay --features extra {file}"));
        assert_eq!(code, Some(1), "{out}");
        let fails = format!("FAILS   {file}  panic: assertion `left == right` failed: a reader");
        assert!(out.contains(&fails), "{out}");
    }

    /// The bug fixed three ways, the test rewritten, unrelated code edited: what
    /// `cargo interleave replay` says of the stored schedule each time.
    #[test]
    fn fixes_are_fixed_a_rewrite_diverged_an_unrelated_edit_still_fails() {
        let f = Fixture::new("verdicts");
        let (code, out) = f.sh(CARGO_TEST);
        assert_eq!(code, Some(101), "{out}");
        let file = stored_in(&out, "publish_then_read");
        let relative = Path::new(&file)
            .strip_prefix(&f.root)
            .unwrap()
            .display()
            .to_string();
        let judge = format!("cargo interleave replay --test {FULL} interleave-regressions");
        let verdict = |what: &str| {
            let (code, out) = f.sh(&judge);
            let line = out
                .lines()
                .find(|l| l.contains(&relative))
                .unwrap_or_else(|| panic!("{what}: no line for {relative} in:\n{out}"))
                .to_owned();
            (code, line, out)
        };
        for (what, edits) in fixes() {
            f.edit(&edits);
            let (code, line, out) = verdict(what);
            let fixed = format!("fixed   {relative}  (200 executions pass: the first follows ");
            assert!(line.starts_with(&fixed), "{what}: {line}\n{out}");
            assert_eq!(code, Some(0), "{what}: {out}");
        }
        // A passing test shows its corpus's summary without --nocapture.
        let (code, out) = f.sh(CARGO_TEST);
        assert_eq!(code, Some(0), "{out}");
        let summary = format!("interleave-test: {FULL}: 1 stored schedule: 0 still fail, 1 fixed");
        assert!(out.contains(&summary), "{out}");

        let start = f.lib.find("    fn publish_then_read() {").unwrap();
        let end = f.lib.find("    /// The same, with two readers").unwrap();
        f.edit(&[(&f.lib[start..end], REWRITTEN)]);
        let (code, line, out) = verdict("rewrite");
        let diverged = format!("diverged {relative}: it stops fitting at decision ");
        assert!(line.starts_with(&diverged), "{line}\n{out}");
        assert!(line.contains("is named 'adder-0' now"), "{line}");
        assert_eq!(code, Some(0), "{out}");

        f.edit(&[("mod sync;\n", UNRELATED)]);
        let (code, line, out) = verdict("unrelated edits");
        assert_eq!(line, format!("FAILS   {relative}  {FAILURE}"), "{out}");
        assert_eq!(code, Some(1), "{out}");
    }
}

/// The writer of the bug: the flag before the value.
const PUBLISH: &str = "        self.ready.store(true, SeqCst);
        self.value.store(value, SeqCst);
";

/// The reader.
const READ: &str = "        if self.ready.load(SeqCst) {
            return Some(self.value.load(SeqCst));
        }
";

/// Takes the slot's lock, in a fix.
const GUARD: &str = "        let _guard = self.lock.lock().unwrap();\n";

/// Three fixes of the bug, as replacements in `src/lib.rs`: the stores swapped (lines move),
/// a lock around both sides, a reader that waits in a loop for the value.
fn fixes() -> [(&'static str, Vec<(&'static str, String)>); 3] {
    let swapped = "        self.value.store(value, SeqCst);
        self.ready.store(true, SeqCst);
";
    let waits = "        if self.ready.load(SeqCst) {
            loop {
                let value = self.value.load(SeqCst);
                if value != 0 {
                    return Some(value);
                }
                sync::thread::yield_now();
            }
        }
";
    [
        ("order", vec![(PUBLISH, swapped.to_owned())]),
        (
            "lock",
            vec![
                (
                    "    ready: AtomicBool,\n",
                    "    ready: AtomicBool,\n    lock: sync::Mutex<()>,\n".to_owned(),
                ),
                (PUBLISH, format!("{GUARD}{PUBLISH}")),
                (READ, format!("{GUARD}{READ}")),
            ],
        ),
        ("loop", vec![(READ, waits.to_owned())]),
    ]
}

/// The failing test rewritten beyond recognition: other threads doing other things.
const REWRITTEN: &str = "    fn publish_then_read() {
        let n = Arc::new(AtomicUsize::new(0));
        let adders: Vec<_> = (0..3)
            .map(|i| {
                let n = Arc::clone(&n);
                named(&format!(\"adder-{i}\"), move || {
                    n.fetch_add(1, SeqCst);
                })
            })
            .collect();
        for a in adders {
            a.join().unwrap();
        }
        assert_eq!(n.load(SeqCst), 3);
    }

";

/// Unrelated edits: comment lines and a function before everything (every line moves).
const UNRELATED: &str = "mod sync;

// Notes added later, which move every line below.
//
// The slot is filled once.

/// Unrelated.
pub fn answer() -> usize {
    42
}
";
