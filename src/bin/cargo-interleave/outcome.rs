//! What replaying one file gave, how it is printed, and the summary of a run.

use std::fmt;
use std::path::Path;

use interleave_test::protocol;
use interleave_test::protocol::json::Value;

/// What replaying one schedule file gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The failure is still there: its kind and the first line of its message.
    Fails { kind: String, first_line: String },
    /// Exploring on from the schedule found another failure: its kind and first line.
    FailsOtherwise { kind: String, first_line: String },
    /// The recorded failure no longer happens: how much the test explored to say so.
    Fixed { detail: String },
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
            Outcome::FailsOtherwise { kind, first_line } => format!(
                "FAILS   {file}  another failure, found from it: {}: {}",
                shown(kind),
                shown(first_line)
            ),
            Outcome::Fixed { detail } => format!("fixed   {file}  ({})", shown(detail)),
            Outcome::Diverged { reason } => format!("diverged {file}: {}", shown(reason)),
            Outcome::Invalid { reason } => format!("invalid {file}: {}", shown(reason)),
            Outcome::Missing { test } => {
                format!(
                    "missing {file}: no test named {} in this package (a test behind a feature \
                     needs it named: --features <F>)",
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

/// The verdict a test printed, as a protocol line (see `interleave_test::protocol`), for
/// the schedule at `replayed` (the path it was given). `None` if the output holds no verdict
/// line for it.
pub(crate) fn read_verdict(stdout: &str, replayed: &Path) -> Option<Outcome> {
    let replayed = replayed.display().to_string();
    let line = protocol::read(stdout).into_iter().find(|l| {
        l.get("event").and_then(Value::as_str) == Some("verdict")
            && l.get("file").and_then(Value::as_str) == Some(replayed.as_str())
    })?;
    let text = |key: &str| {
        line.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let version = line.get("version").and_then(Value::as_u64);
    if version != Some(protocol::VERSION) {
        return Some(Outcome::Invalid {
            reason: format!(
                "the test binary speaks protocol version {}, this cargo-interleave reads {}: \
                 install the cargo-interleave of the interleave-test version the crate uses",
                version.map_or_else(|| "?".to_owned(), |v| v.to_string()),
                protocol::VERSION
            ),
        });
    }
    Some(match text("verdict").as_str() {
        "still-fails" => Outcome::Fails {
            kind: text("kind"),
            first_line: text("message"),
        },
        "fails-otherwise" => Outcome::FailsOtherwise {
            kind: text("kind"),
            first_line: text("message"),
        },
        "fixed" => Outcome::Fixed {
            detail: text("detail"),
        },
        "diverged" => Outcome::Diverged {
            reason: text("reason"),
        },
        "invalid" => Outcome::Invalid {
            reason: strip_path(&text("reason"), &replayed).to_owned(),
        },
        other => Outcome::Invalid {
            reason: format!("the test printed a verdict this tool does not know: {other:?}"),
        },
    })
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
            Outcome::Fails { .. } | Outcome::FailsOtherwise { .. } => &mut self.fails,
            Outcome::Fixed { .. } => &mut self.fixed,
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
        read_verdict(stdout, Path::new(FILE))
    }

    /// A verdict line for [`FILE`] with `fields`, written by serde_json (not by the crate).
    fn verdict(fields: serde_json::Value) -> String {
        let mut fields = fields.as_object().unwrap().clone();
        fields.insert("event".into(), "verdict".into());
        fields.insert("file".into(), FILE.into());
        fields.entry("version").or_insert(protocol::VERSION.into());
        format!("{}{}", protocol::PREFIX, serde_json::Value::Object(fields))
    }

    #[test]
    fn every_verdict_is_read() {
        let out = format!(
            "\nrunning 1 test\n{}\ntest racy ... FAILED\n",
            verdict(
                serde_json::json!({"verdict": "still-fails", "kind": "panic", "message": "a: b"})
            )
        );
        assert_eq!(
            parse(&out),
            Some(Outcome::Fails {
                kind: "panic".into(),
                first_line: "a: b".into()
            })
        );
        let fixed = verdict(serde_json::json!({"verdict": "fixed", "detail": "200 ran"}));
        assert_eq!(
            parse(&fixed),
            Some(Outcome::Fixed {
                detail: "200 ran".into()
            })
        );
        let diverged = verdict(serde_json::json!({"verdict": "diverged", "reason": "r"}));
        assert_eq!(
            parse(&diverged),
            Some(Outcome::Diverged { reason: "r".into() })
        );
        let invalid = verdict(
            serde_json::json!({"verdict": "invalid", "reason": format!("{FILE}: invalid schedule: x")}),
        );
        assert_eq!(
            parse(&invalid),
            Some(Outcome::Invalid {
                reason: "invalid schedule: x".into()
            })
        );
        let other = verdict(
            serde_json::json!({"verdict": "fails-otherwise", "kind": "deadlock", "message": "m"}),
        );
        assert_eq!(
            parse(&other),
            Some(Outcome::FailsOtherwise {
                kind: "deadlock".into(),
                first_line: "m".into()
            })
        );
        assert_eq!(parse("running 0 tests\n"), None);
    }

    #[test]
    fn a_verdict_of_another_file_or_version_is_not_taken() {
        let line = verdict(serde_json::json!({"verdict": "fixed"}));
        assert_eq!(read_verdict(&line, Path::new("/elsewhere.json")), None);
        let newer = verdict(serde_json::json!({"verdict": "fixed", "version": 99}));
        let Some(Outcome::Invalid { reason }) = parse(&newer) else {
            panic!("a verdict of version 99 was taken");
        };
        assert!(reason.contains("protocol version 99"), "{reason}");
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
        let fixed = Outcome::Fixed {
            detail: "its 3 decisions replay and the execution passes".into(),
        };
        assert_eq!(
            fixed.line(file),
            "fixed   interleave-regressions/t/racy/00ff.json  (its 3 decisions replay and the \
             execution passes)"
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
            "missing interleave-regressions/t/racy/00ff.json: no test named t::gone in this \
             package (a test behind a feature needs it named: --features <F>)"
        );
    }

    #[test]
    fn the_summary_counts_every_outcome() {
        let mut s = Summary::default();
        assert_eq!(
            s.to_string(),
            "0 schedules: 0 still fail, 0 fixed, 0 diverged, 0 invalid"
        );
        s.add(&Outcome::Fixed {
            detail: String::new(),
        });
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
