//! The markdown report: a per-file table with totals, the files that did not compile, the
//! categories of the tests that did not pass, then every such test with its category and
//! reason. Also the baseline listing (`real/tests.txt`) a real-Tokio run leaves, which
//! gives the test names of a file that does not compile on the model.

use crate::Flavor;
use crate::compile::Built;
use crate::reasons::{self, Reason};
use crate::run::{Outcome, Status};
use crate::tokio_src::TestFile;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// Everything the report is made of.
#[derive(Debug)]
pub(crate) struct Input<'a> {
    /// Model or real Tokio.
    pub(crate) flavor: Flavor,
    /// The version of the Tokio whose tests these are.
    pub(crate) tokio_version: &'a str,
    /// The selected files.
    pub(crate) files: &'a [TestFile],
    /// What compiling each file gave.
    pub(crate) built: &'a BTreeMap<String, Built>,
    /// Every selected test's outcome.
    pub(crate) outcomes: &'a [Outcome],
    /// The reasons file.
    pub(crate) reasons: &'a [Reason],
    /// Whether the baseline listing was there for files that did not compile.
    pub(crate) baseline: &'a BTreeMap<String, Vec<String>>,
    /// The whole run's wall time, build included.
    pub(crate) wall: Duration,
    /// The command line's settings.
    pub(crate) options: &'a crate::Options,
}

/// Counts for one row of the per-file table.
#[derive(Debug, Default, Clone, Copy)]
struct Row {
    tests: usize,
    compiled: usize,
    passed: usize,
    failed: usize,
    hung: usize,
    aborted: usize,
    plain: (usize, usize),
    tokio: (usize, usize),
}

impl Row {
    fn add(&mut self, outcome: &Outcome) {
        self.tests += 1;
        let passed = outcome.status == Status::Pass;
        match outcome.status {
            Status::Pass => self.passed += 1,
            Status::Fail => self.failed += 1,
            Status::Hang => self.hung += 1,
            Status::Abort => self.aborted += 1,
            Status::NotCompiled => {}
        }
        self.compiled += usize::from(outcome.status != Status::NotCompiled);
        let kind = if outcome.is_async {
            &mut self.tokio
        } else {
            &mut self.plain
        };
        kind.0 += usize::from(passed);
        kind.1 += 1;
    }

    fn merge(&mut self, other: &Row) {
        self.tests += other.tests;
        self.compiled += other.compiled;
        self.passed += other.passed;
        self.failed += other.failed;
        self.hung += other.hung;
        self.aborted += other.aborted;
        self.plain = (self.plain.0 + other.plain.0, self.plain.1 + other.plain.1);
        self.tokio = (self.tokio.0 + other.tokio.0, self.tokio.1 + other.tokio.1);
    }

    fn cells(&self, name: &str) -> String {
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {}/{} | {}/{} |\n",
            self.tests,
            self.compiled,
            self.passed,
            self.failed,
            self.hung,
            self.aborted,
            self.plain.0,
            self.plain.1,
            self.tokio.0,
            self.tokio.1
        )
    }
}

/// The whole report.
pub(crate) fn render(input: &Input<'_>) -> String {
    let against = match input.flavor {
        Flavor::Model => "`interleave_test_tokio`",
        Flavor::Switch => "`interleave_test_tokio` through `interleave-tokio`",
        Flavor::Real => "real Tokio (baseline)",
    };
    let mut out = format!(
        "# Tokio {} integration tests against {against}\n\nWall time {:.0} s (build included); \
         each test alone, timeout {} s, {} at once, `INTERLEAVE_SEED={}`.\n\n",
        input.tokio_version,
        input.wall.as_secs_f64(),
        input.options.timeout.as_secs(),
        input.options.jobs,
        input.options.seed
    );
    per_file_table(input, &mut out);
    compile_errors(input, &mut out);
    not_passing(input, &mut out);
    out
}

fn per_file_table(input: &Input<'_>, out: &mut String) {
    out.push_str("| file | tests | compiled | passed | failed | hung | aborted | `#[test]` passed | `#[tokio::test]` passed |\n");
    out.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    let mut total = Row::default();
    for file in input.files {
        let mut row = Row::default();
        input
            .outcomes
            .iter()
            .filter(|o| o.file == file.name)
            .for_each(|o| row.add(o));
        out.push_str(&row.cells(&file.name));
        total.merge(&row);
    }
    out.push_str(&total.cells("**total**"));
    out.push('\n');
}

fn compile_errors(input: &Input<'_>, out: &mut String) {
    let failed: Vec<_> = input
        .built
        .iter()
        .filter(|(_, b)| b.exe.is_none())
        .collect();
    if failed.is_empty() {
        return;
    }
    out.push_str("## Files that did not compile\n\n| file | errors | first error | tests counted from |\n|---|--:|---|---|\n");
    for (name, built) in failed {
        let source = if input.baseline.contains_key(name) {
            "baseline listing"
        } else {
            "source (estimate)"
        };
        let error = cell(built.first_error.as_deref().unwrap_or(""));
        let _ = writeln!(out, "| {name} | {} | {error} | {source} |", built.errors);
    }
    out.push('\n');
}

fn not_passing(input: &Input<'_>, out: &mut String) {
    let failing: Vec<(&Outcome, Option<&Reason>)> = input
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| (o, reasons::find(input.reasons, &o.file, &o.name, &o.reason)))
        .collect();
    if failing.is_empty() {
        return;
    }
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, reason) in &failing {
        *by_category
            .entry(reason.map_or("unclassified", |r| r.category.as_str()))
            .or_default() += 1;
    }
    out.push_str("## Not passing, by category\n\n| category | tests |\n|---|--:|\n");
    for (category, count) in &by_category {
        let _ = writeln!(out, "| {category} | {count} |");
    }
    out.push_str("\n## Every test that did not pass\n\n");
    out.push_str(
        "| test | kind | status | category | what happened | why |\n|---|---|---|---|---|---|\n",
    );
    for (outcome, reason) in failing {
        let kind = if outcome.is_async { "tokio" } else { "plain" };
        let what = match outcome.status {
            Status::NotCompiled => "file did not compile".to_string(),
            _ => cell(&outcome.reason),
        };
        let (category, why) = reason.map_or(("unclassified", ""), |r| {
            (r.category.as_str(), r.reason.as_str())
        });
        let _ = writeln!(
            out,
            "| {}::{} | {kind} | {} | {category} | {what} | {} |",
            outcome.file,
            outcome.name,
            outcome.status.word(),
            cell(why)
        );
    }
}

/// Text made safe for one table cell, and not too long.
fn cell(text: &str) -> String {
    let text = text.replace('|', "\\|").replace('\n', " ");
    match text.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The test names of the last real-Tokio run, per file (empty when there was none).
pub(crate) fn load_baseline(out_dir: &Path) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(out_dir.join("real").join("tests.txt")).unwrap_or_default();
    let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        if let Some((file, name)) = line.split_once("::") {
            lists
                .entry(file.to_string())
                .or_default()
                .push(name.to_string());
        }
    }
    lists
}

/// Records the listing of a real-Tokio run, merged over the files of earlier runs.
pub(crate) fn save_baseline(
    out_dir: &Path,
    listed: &BTreeMap<String, Vec<String>>,
) -> Result<(), String> {
    let mut lists = load_baseline(out_dir);
    lists.extend(listed.iter().map(|(f, names)| (f.clone(), names.clone())));
    let mut text = String::new();
    for (file, names) in &lists {
        names.iter().for_each(|name| {
            let _ = writeln!(text, "{file}::{name}");
        });
    }
    let path = out_dir.join("real").join("tests.txt");
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
}
