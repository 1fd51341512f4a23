//! What replaying one file gave, how it is printed, and the summary of a run.

use std::fmt;
use std::path::Path;

/// The prefix of the one line a test prints in replay mode.
pub(crate) const REPLAY_PREFIX: &str = "interleave-test replay: ";

/// What replaying one schedule file gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The failure is still there: its kind and the first line of its message.
    Fails { kind: String, first_line: String },
    /// The test passes under the schedule.
    Fixed,
    /// The schedule no longer fits the test, which passes.
    Diverged { reason: String },
    /// The file cannot be replayed.
    Invalid { reason: String },
    /// The test the schedule names is not in the package.
    Missing { test: String },
}

impl Outcome {
    /// The line printed for `file`. What comes from the file or the test's output is shown
    /// with control characters escaped and cut after [`MAX_SHOWN`] characters: a test binary
    /// built with another interleave-test version may print anything.
    pub(crate) fn line(&self, file: &Path) -> String {
        let file = file.display();
        match self {
            Outcome::Fails { kind, first_line } => {
                format!("FAILS   {file}  {}: {}", shown(kind), shown(first_line))
            }
            Outcome::Fixed => format!("fixed   {file}"),
            Outcome::Diverged { reason } => format!("diverged {file}: {}", shown(reason)),
            Outcome::Invalid { reason } => format!("invalid {file}: {}", shown(reason)),
            Outcome::Missing { test } => {
                format!(
                    "missing {file}: no test named {} in this package",
                    shown(test)
                )
            }
        }
    }
}

/// The most characters of a reason, message or test name a line shows.
const MAX_SHOWN: usize = 300;

/// `text` with control characters escaped, cut after [`MAX_SHOWN`] characters (then
/// `… (N bytes)`).
fn shown(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == MAX_SHOWN {
            out.push_str(&format!("… ({} bytes)", text.len()));
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Reads the replay line a test printed for the schedule at `replayed` (the path it was
/// given). `None` if the output holds no replay line.
pub(crate) fn parse_replay_line(stdout: &str, replayed: &Path) -> Option<Outcome> {
    let line = stdout.lines().find_map(|l| l.strip_prefix(REPLAY_PREFIX))?;
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let detail = after_path(rest, &replayed.display().to_string());
    Some(match word {
        "fails" => {
            let (kind, first_line) = detail.split_once(": ").unwrap_or((detail, ""));
            Outcome::Fails {
                kind: kind.to_owned(),
                first_line: first_line.to_owned(),
            }
        }
        "fixed" => Outcome::Fixed,
        "diverged" => Outcome::Diverged {
            reason: detail.to_owned(),
        },
        "invalid" => Outcome::Invalid {
            reason: strip_path(detail, &replayed.display().to_string()).to_owned(),
        },
        _ => Outcome::Invalid {
            reason: format!("the test printed a replay line this tool does not know: {line}"),
        },
    })
}

/// What follows `<path>: ` in `rest`; if the test printed the path differently, what
/// follows the first `.json: `.
fn after_path<'a>(rest: &'a str, path: &str) -> &'a str {
    if let Some(detail) = rest.strip_prefix(path) {
        return detail.strip_prefix(": ").unwrap_or(detail.trim_start());
    }
    rest.split_once(".json: ").map_or("", |(_, detail)| detail)
}

/// `detail` without a leading `<path>: ` (a schedule error names its file).
fn strip_path<'a>(detail: &'a str, path: &str) -> &'a str {
    detail
        .strip_prefix(path)
        .and_then(|d| d.strip_prefix(": "))
        .unwrap_or(detail)
}

/// The tally of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    fails: usize,
    fixed: usize,
    diverged: usize,
    invalid: usize,
    missing: usize,
}

impl Summary {
    /// Counts one outcome.
    pub(crate) fn add(&mut self, outcome: &Outcome) {
        let count = match outcome {
            Outcome::Fails { .. } => &mut self.fails,
            Outcome::Fixed => &mut self.fixed,
            Outcome::Diverged { .. } => &mut self.diverged,
            Outcome::Invalid { .. } => &mut self.invalid,
            Outcome::Missing { .. } => &mut self.missing,
        };
        *count += 1;
    }

    /// Whether every file is fixed or diverged.
    pub(crate) fn all_pass(&self) -> bool {
        self.fails + self.invalid + self.missing == 0
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.fails + self.fixed + self.diverged + self.invalid + self.missing;
        let noun = if total == 1 { "schedule" } else { "schedules" };
        write!(
            f,
            "{total} {noun}: {} still fail, {} fixed, {} diverged, {} invalid",
            self.fails, self.fixed, self.diverged, self.invalid
        )?;
        if self.missing > 0 {
            write!(f, ", {} missing", self.missing)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "/tmp/c/interleave-regressions/t/racy/00ff.json";

    fn parse(stdout: &str) -> Option<Outcome> {
        parse_replay_line(stdout, Path::new(FILE))
    }

    #[test]
    fn every_replay_line_is_read() {
        let out = format!(
            "\nrunning 1 test\ninterleave-test replay: fails {FILE}: panic: assertion failed: a: b\ntest racy ... FAILED\n"
        );
        assert_eq!(
            parse(&out),
            Some(Outcome::Fails {
                kind: "panic".into(),
                first_line: "assertion failed: a: b".into()
            })
        );
        assert_eq!(
            parse(&format!("interleave-test replay: fixed {FILE}\n")),
            Some(Outcome::Fixed)
        );
        assert_eq!(
            parse(&format!(
                "interleave-test replay: diverged {FILE}: step 3: thread 2 cannot run\n"
            )),
            Some(Outcome::Diverged {
                reason: "step 3: thread 2 cannot run".into()
            })
        );
        assert_eq!(
            parse(&format!(
                "interleave-test replay: invalid {FILE}: {FILE}: invalid schedule: x\n"
            )),
            Some(Outcome::Invalid {
                reason: "invalid schedule: x".into()
            })
        );
        assert_eq!(parse("running 0 tests\n"), None);
    }

    #[test]
    fn a_path_printed_differently_is_skipped_up_to_its_extension() {
        let out = "interleave-test replay: fails ./racy/00ff.json: deadlock: every live thread is blocked";
        assert_eq!(
            parse(out),
            Some(Outcome::Fails {
                kind: "deadlock".into(),
                first_line: "every live thread is blocked".into()
            })
        );
    }

    #[test]
    fn lines_follow_the_documented_format() {
        let file = Path::new("interleave-regressions/t/racy/00ff.json");
        let fails = Outcome::Fails {
            kind: "panic".into(),
            first_line: "lost".into(),
        };
        assert_eq!(
            fails.line(file),
            "FAILS   interleave-regressions/t/racy/00ff.json  panic: lost"
        );
        assert_eq!(
            Outcome::Fixed.line(file),
            "fixed   interleave-regressions/t/racy/00ff.json"
        );
        let diverged = Outcome::Diverged { reason: "r".into() };
        assert_eq!(
            diverged.line(file),
            "diverged interleave-regressions/t/racy/00ff.json: r"
        );
        let invalid = Outcome::Invalid {
            reason: "bad".into(),
        };
        assert_eq!(
            invalid.line(file),
            "invalid interleave-regressions/t/racy/00ff.json: bad"
        );
        let missing = Outcome::Missing {
            test: "t::gone".into(),
        };
        assert_eq!(
            missing.line(file),
            "missing interleave-regressions/t/racy/00ff.json: no test named t::gone in this package"
        );
    }

    #[test]
    fn the_summary_counts_every_outcome() {
        let mut s = Summary::default();
        assert_eq!(
            s.to_string(),
            "0 schedules: 0 still fail, 0 fixed, 0 diverged, 0 invalid"
        );
        s.add(&Outcome::Fixed);
        assert_eq!(
            s.to_string(),
            "1 schedule: 0 still fail, 1 fixed, 0 diverged, 0 invalid"
        );
        assert!(s.all_pass());
        s.add(&Outcome::Diverged {
            reason: String::new(),
        });
        assert!(s.all_pass(), "a diverged schedule does not fail the run");
        s.add(&Outcome::Missing { test: "t".into() });
        assert!(!s.all_pass());
        s.add(&Outcome::Invalid {
            reason: String::new(),
        });
        s.add(&Outcome::Fails {
            kind: "panic".into(),
            first_line: String::new(),
        });
        assert_eq!(
            s.to_string(),
            "5 schedules: 1 still fail, 1 fixed, 1 diverged, 1 invalid, 1 missing"
        );
        assert!(!s.all_pass());
    }

    #[test]
    fn lines_show_a_bounded_and_escaped_reason() {
        let file = Path::new("x.json");
        let long = Outcome::Invalid {
            reason: "r".repeat(10_000_000),
        };
        let line = long.line(file);
        assert_eq!(
            line,
            format!(
                "invalid x.json: {}… (10000000 bytes)",
                "r".repeat(MAX_SHOWN)
            )
        );
        let coloured = Outcome::Diverged {
            reason: "\u{1b}[31mred\r".into(),
        };
        assert_eq!(coloured.line(file), "diverged x.json: \\u{1b}[31mred\\r");
    }
}
