//! Compiles every test file as its own test target in one `cargo build --keep-going`, so a
//! file that does not compile stops none of the others, and records per file either its
//! test executable or its first compiler error.

use crate::tokio_src::TestFile;
use crate::{Flavor, Options};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What compiling one file gave.
#[derive(Debug, Default)]
pub(crate) struct Built {
    /// The test executable, when the file compiled.
    pub(crate) exe: Option<PathBuf>,
    /// The first compiler error (`message at file:line`), when it did not.
    pub(crate) first_error: Option<String>,
    /// How many compiler errors the file had.
    pub(crate) errors: usize,
}

/// Builds the test targets of `files` in the crate at `crate_dir`. Rendered diagnostics go
/// to `build.log` beside the crate's manifest.
pub(crate) fn build(
    options: &Options,
    crate_dir: &Path,
    files: &[TestFile],
) -> Result<BTreeMap<String, Built>, String> {
    let mut command = Command::new("cargo");
    command
        .args([
            "build",
            "--keep-going",
            "--message-format=json",
            "--manifest-path",
        ])
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", build_dir(options))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if options.flavor == Flavor::Switch {
        command.env("RUSTFLAGS", "--cfg interleave");
    }
    for file in files {
        command.args(["--test", &file.name]);
    }
    let mut child = command.spawn().map_err(|e| format!("cargo build: {e}"))?;
    let log_path = crate_dir.join("build.log");
    let mut log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let mut built: BTreeMap<String, Built> = files
        .iter()
        .map(|f| (f.name.clone(), Built::default()))
        .collect();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        record(&message, &mut built, &mut log);
    }
    // A failed build is expected when some file does not compile; each is recorded.
    child.wait().map_err(|e| format!("cargo build: {e}"))?;
    for (name, entry) in &mut built {
        if entry.exe.is_none() && entry.first_error.is_none() {
            entry.first_error = Some(format!("no executable for `{name}` (see build.log)"));
        }
    }
    Ok(built)
}

/// Files one message of cargo's JSON stream under its test target.
fn record(message: &serde_json::Value, built: &mut BTreeMap<String, Built>, log: &mut impl Write) {
    let target = message["target"]["name"].as_str().unwrap_or_default();
    let is_test = message["target"]["kind"]
        .as_array()
        .is_some_and(|kinds| kinds.iter().any(|k| k == "test"));
    let Some(entry) = built.get_mut(target).filter(|_| is_test) else {
        return;
    };
    match message["reason"].as_str() {
        Some("compiler-artifact") => {
            entry.exe = message["executable"].as_str().map(PathBuf::from);
        }
        Some("compiler-message") if message["message"]["level"] == "error" => {
            let diagnostic = &message["message"];
            let rendered = diagnostic["rendered"].as_str().unwrap_or_default();
            let _ = writeln!(log, "[{target}] {rendered}");
            if diagnostic["message"].as_str().is_some_and(is_summary) {
                return;
            }
            entry.errors += 1;
            if entry.first_error.is_none() {
                entry.first_error = Some(first_error_line(diagnostic));
            }
        }
        _ => {}
    }
}

/// rustc's closing "aborting due to N previous errors" and the like, not errors of their own.
fn is_summary(message: &str) -> bool {
    message.starts_with("aborting due to") || message.starts_with("could not compile")
}

/// The span, or the macro call it was expanded from when it lies outside Tokio's `tests/`
/// (in `assert_eq!` of the standard library, say), so the location is a test file's line.
fn in_tests(mut span: &serde_json::Value) -> &serde_json::Value {
    while span["file_name"]
        .as_str()
        .is_some_and(|f| !f.contains("/tests/"))
    {
        match span["expansion"]["span"] {
            serde_json::Value::Null => break,
            ref call => span = call,
        }
    }
    span
}

/// `message (file:line)`, from the diagnostic's primary span.
fn first_error_line(diagnostic: &serde_json::Value) -> String {
    let text = diagnostic["message"]
        .as_str()
        .unwrap_or("error")
        .replace('\n', " ");
    let code = diagnostic["code"]["code"]
        .as_str()
        .map(|c| format!("[{c}] "))
        .unwrap_or_default();
    let span = diagnostic["spans"].as_array().and_then(|spans| {
        spans
            .iter()
            .find(|s| s["is_primary"] == true)
            .or_else(|| spans.first())
    });
    match span.map(in_tests) {
        Some(span) => {
            let file = span["file_name"].as_str().unwrap_or_default();
            let file = file.rsplit('/').next().unwrap_or(file);
            format!("{code}{text} ({file}:{})", span["line_start"])
        }
        None => format!("{code}{text}"),
    }
}

/// Where cargo builds: the switch's build has its own directory, since its `RUSTFLAGS`
/// would make cargo rebuild everything each time the flavor changes.
fn build_dir(options: &Options) -> PathBuf {
    match options.flavor {
        Flavor::Switch => options
            .target_dir
            .join("tokio-oracle")
            .join("switch-target"),
        Flavor::Model | Flavor::Real => options.target_dir.clone(),
    }
}
