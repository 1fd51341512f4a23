//! What an `#[interleave]` test runs: its stored schedules first, then the exploration. A new
//! failure is stored in the test's regression corpus and reported with the way to replay it.

use std::path::Path;

use crate::StrategyKind;
use crate::config::{self, Builder};
use crate::corpus::{Content, Corpus, Entry};
use crate::report::{Failure, FailureKind};

/// The settings `#[interleave(...)]` gives a test. Not public API: built by the macro.
#[derive(Clone, Debug)]
pub struct TestSpec {
    /// `module_path!()` and the function name: the test's full path.
    pub name: &'static str,
    /// `CARGO_MANIFEST_DIR` of the crate the test is in: the corpus lives below it.
    pub manifest_dir: &'static str,
    /// `iterations = N`.
    pub iterations: Option<u64>,
    /// `seed = N`.
    pub seed: Option<u64>,
    /// `max_steps = N`.
    pub max_steps: Option<u64>,
    /// `strategy = "..."`, with `depth` or `max_preemptions`.
    pub strategy: Option<StrategyKind>,
}

impl TestSpec {
    /// The name libtest gives the test: its path without the crate name.
    fn libtest_name(&self) -> &str {
        self.name
            .split_once("::")
            .map_or(self.name, |(_, rest)| rest)
    }
}

/// Runs the test `spec` on `model`; panics (fails the test) with the report of a failure.
#[track_caller]
pub fn run_test<F: Fn() + Sync>(spec: &TestSpec, model: F) {
    let builder = Builder::for_test(spec);
    if let Some(file) = config::replay_file() {
        return replay_one(&builder, &model, &file);
    }
    let corpus = Corpus::new(&config::regressions_root(spec.manifest_dir), spec.name);
    replay_corpus(&builder, &model, &corpus, spec);
    if let Err(failure) = builder.check(&model) {
        let (path, new) = corpus.store(failure.schedule()).unwrap_or_else(|e| {
            panic!("{failure}\n\nthe schedule could not be stored in the regression corpus ({e})")
        });
        let shown = path.display();
        let stored = if new {
            format!(
                "the schedule is stored in {shown} (commit it: every later run replays it first)"
            )
        } else {
            format!("the schedule was stored already, in {shown}")
        };
        panic!("{failure}\n\n{stored}\n{}", how_to_replay(&path, spec));
    }
}

fn how_to_replay(path: &Path, spec: &TestSpec) -> String {
    format!(
        "replay it: cargo interleave replay {path}\n       or: {var}={path} cargo test -- --exact {name}",
        path = path.display(),
        var = config::env::REPLAY,
        name = spec.libtest_name(),
    )
}

/// Replays every stored schedule of the test: one that still fails fails the test now, and
/// so does a file that cannot be read. What is not a regular file in the corpus, or a link
/// out of it, is skipped unread with a note.
fn replay_corpus<F: Fn() + Sync>(builder: &Builder, model: &F, corpus: &Corpus, spec: &TestSpec) {
    let entries = corpus
        .entries()
        .unwrap_or_else(|e| panic!("interleave-test: cannot read the regression corpus: {e}"));
    for Entry { path, content } in entries {
        let schedule = match content {
            Content::Schedule(schedule) => schedule,
            Content::Unreadable(e) => {
                let shown = path.display().to_string();
                let e = e.to_string();
                let e = e.strip_prefix(&format!("{shown}: ")).unwrap_or(&e);
                panic!(
                    "interleave-test: the stored schedule {shown} cannot be read: {e}\nfix the \
                     file or delete it"
                )
            }
            Content::Skipped(reason) => {
                eprintln!(
                    "interleave-test: skipped in the regression corpus: {reason}; it does not \
                     fail the run. Remove it from the corpus."
                );
                continue;
            }
        };
        match builder.replay(model, &schedule) {
            Ok(()) => eprintln!(
                "interleave-test: {} passes now: the failure it recorded is fixed. It stays as a \
                 regression test; delete the file to drop it.",
                path.display()
            ),
            Err(f) if f.kind() == FailureKind::Divergence => eprintln!(
                "interleave-test: {} no longer fits this test ({}); it does not fail the run. \
                 Delete it if the test changed on purpose.",
                path.display(),
                first_line(&f)
            ),
            Err(f) => panic!(
                "{f}\n\nthis failure was stored before, in {}, and still happens.\n{}",
                path.display(),
                how_to_replay(&path, spec)
            ),
        }
    }
}

/// The `INTERLEAVE_REPLAY` mode: replays one file and prints one line for `cargo interleave`.
fn replay_one<F: Fn() + Sync>(builder: &Builder, model: &F, path: &Path) {
    let schedule = match crate::Schedule::load(path) {
        Ok(s) => s,
        Err(e) => {
            println!("interleave-test replay: invalid {}: {e}", path.display());
            panic!("interleave-test: {e}");
        }
    };
    match builder.replay(model, &schedule) {
        Ok(()) => println!("interleave-test replay: fixed {}", path.display()),
        Err(f) if f.kind() == FailureKind::Divergence => {
            println!(
                "interleave-test replay: diverged {}: {}",
                path.display(),
                first_line(&f)
            );
        }
        Err(f) => {
            println!(
                "interleave-test replay: fails {}: {}: {}",
                path.display(),
                f.kind(),
                first_line(&f)
            );
            panic!("{f}");
        }
    }
}

fn first_line(f: &Failure) -> &str {
    f.message().lines().next().unwrap_or("")
}
