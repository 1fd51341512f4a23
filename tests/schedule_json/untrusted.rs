//! Schedule files are untrusted input (a module of `tests/schedule_json.rs`): one test per
//! hostile file of issue 7, through the public API. `cargo interleave` on the same files is
//! tested in `tests/cli.rs`, the regression corpus in `tests/corpus.rs`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use interleave_test::{Schedule, ScheduleError};

use super::{TempDir, golden, parse_err, valid_doc};

/// The test name of the argument-injection report: libtest would read it as `--logfile`.
const INJECTION: &str = "corpus_tests::--logfile=/tmp/x.txt";

/// Ten megabytes, the size of the bad field of the report.
const TEN_MB: usize = 10 * 1024 * 1024;

/// Loads `path` on another thread, failing the test if that takes more than 10 s: a load
/// that blocks (on a FIFO) or reads forever (from a device) must end at once.
fn load_at_once(path: &Path) -> Result<Schedule, ScheduleError> {
    let (tx, rx) = mpsc::channel();
    let owned = path.to_owned();
    std::thread::spawn(move || tx.send(Schedule::load(&owned)));
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("Schedule::load({}) did not end", path.display()))
}

/// The text of [`valid_doc`] with `test` as its test name.
fn doc_naming(test: &str) -> String {
    let mut doc = valid_doc();
    doc["test"] = test.into();
    doc.to_string()
}

/// Regression (issue 7): the test name of a file was passed to the test binary as is, so
/// `corpus_tests::--logfile=/tmp/x.txt` made libtest write that file and run every test.
/// The name stays data (`test()`), and `test_path()` refuses it.
#[test]
fn a_test_name_that_is_not_a_rust_path_is_refused_by_test_path() {
    let s = Schedule::from_json(&doc_naming(INJECTION)).expect("the name is data");
    assert_eq!(s.test(), Some(INJECTION));
    let e = s.test_path().unwrap_err();
    let ScheduleError::Field { path, problem } = &e else {
        panic!("expected a field error: {e:?}")
    };
    assert_eq!(path, "test");
    assert!(
        problem.contains(&format!("found {INJECTION:?}")),
        "{problem}"
    );
    assert!(e.to_string().contains("Rust test path"), "{e}");

    for bad in [
        "",
        "-x",
        "--list",
        "a::",
        "::a",
        "a:::b",
        "a::-b",
        "a b",
        "a::b c",
        "_",
        "1a",
        "r#",
        "a=b",
        "a/b",
        "a::b\n--logfile",
    ] {
        let s = Schedule::from_json(&doc_naming(bad)).unwrap();
        assert!(s.test_path().is_err(), "{bad:?} should be refused");
    }
    for good in [
        "t",
        "a::b",
        "my_tests::queue::push",
        "_x::r#try",
        "größe::t2",
    ] {
        let s = Schedule::from_json(&doc_naming(good)).unwrap();
        assert_eq!(s.test_path(), Ok(Some(good)));
    }
    let mut anonymous = valid_doc();
    anonymous["test"] = serde_json::Value::Null;
    let s = Schedule::from_json(&anonymous.to_string()).unwrap();
    assert_eq!(s.test_path(), Ok(None));
}

/// Regression (issue 7): `"format": 7` was reported as `"format" is "7"`.
#[test]
fn a_number_is_shown_as_a_number() {
    let e = parse_err(|d| d["format"] = 7.into());
    assert_eq!(
        e,
        ScheduleError::NotASchedule {
            found: Some("7".into())
        }
    );
    assert!(
        e.to_string()
            .contains("\"format\" is 7, not \"interleave-test-schedule\""),
        "{e}"
    );
    let e = parse_err(|d| d["seed"] = (-2.5).into());
    assert!(e.to_string().ends_with("found -2.5"), "{e}");
}

/// Regression (issue 7): a key given twice silently took the last value.
#[test]
fn a_duplicate_key_is_an_error_naming_the_key_and_where() {
    let text =
        "{\"format\": \"interleave-test-schedule\", \"version\": 7,\n \"seed\": 1, \"seed\": 2}";
    let e = Schedule::from_json(text).unwrap_err();
    assert_eq!(
        e,
        ScheduleError::DuplicateKey {
            key: "\"seed\"".into(),
            line: 2,
            column: 18
        }
    );
    assert!(
        e.to_string()
            .starts_with("invalid schedule: key \"seed\" is given twice in one object"),
        "{e}"
    );

    // In a decision, and for a key the reader does not know.
    let golden = golden::text();
    let twice = golden.replacen("\"of\": 2,", "\"of\": 2, \"of\": 3,", 1);
    assert_ne!(twice, golden);
    let e = Schedule::from_json(&twice).unwrap_err();
    assert!(
        matches!(&e, ScheduleError::DuplicateKey { key, .. } if key == "\"of\""),
        "{e:?}"
    );
    let unknown = golden.replacen('{', "{\"note\": 1, \"note\": 1,", 1);
    let e = Schedule::from_json(&unknown).unwrap_err();
    assert!(
        matches!(&e, ScheduleError::DuplicateKey { key, .. } if key == "\"note\""),
        "{e:?}"
    );
}

/// Regression (issue 17): a schedule file naming `"version"` twice was reported accepted.
/// The format version decides how a schedule replays, so it is refused like any other key
/// given twice, whichever value comes first, from text and from a file.
#[test]
fn a_duplicate_version_is_refused_like_any_other_key() {
    let golden = golden::text();
    let key = "\"version\": 7,";
    assert!(golden.lines().nth(2).is_some_and(|l| l.trim() == key));
    for again in ["6", "5", "4", "3", "2", "1", "\"6\"", "99"] {
        // A second `version` on a line of its own after the golden one, and a first one
        // before it: either way the one on line 4 is the second, its closing quote at
        // column 11.
        let after = golden.replacen(key, &format!("{key}\n  \"version\": {again},"), 1);
        let before = golden.replacen(key, &format!("\"version\": {again},\n  {key}"), 1);
        for twice in [after, before] {
            let expected = ScheduleError::DuplicateKey {
                key: "\"version\"".into(),
                line: 4,
                column: 11,
            };
            assert_eq!(
                Schedule::from_json(&twice),
                Err(expected.clone()),
                "{twice}"
            );
            let dir = TempDir::new("version-twice");
            let path = dir.0.join("twice.json");
            std::fs::write(&path, &twice).unwrap();
            let e = Schedule::load(&path).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "{}: invalid schedule: key \"version\" is given twice in one object (again \
                     at line 4, column 11); keep only one",
                    path.display()
                )
            );
            assert_eq!(
                e,
                ScheduleError::InFile {
                    path,
                    error: Box::new(expected)
                }
            );
        }
    }
}

#[test]
fn unknown_keys_are_skipped_but_not_without_bound() {
    let golden = golden::text();
    let noted = golden.replacen('{', "{\"note\": {\"a\": [1, 2], \"a\": 0},", 1);
    assert_eq!(
        Schedule::from_json(&noted).unwrap(),
        golden::schedule(),
        "an unknown key is skipped unread, whatever its value"
    );
    let many: String = (0..100).map(|i| format!("\"k{i}\": 0, ")).collect();
    let crowded = golden.replacen('{', &format!("{{{many}"), 1);
    let e = Schedule::from_json(&crowded).unwrap_err();
    assert!(
        matches!(e, ScheduleError::TooManyKeys { limit: 64, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("more than 64 keys"), "{e}");
}

/// Regression (issue 7): a UTF-8 byte order mark was "not valid JSON at line 1, column 1".
#[test]
fn a_byte_order_mark_is_skipped_and_utf16_is_named() {
    let with_bom = format!("\u{feff}{}", golden::text());
    assert_eq!(Schedule::from_json(&with_bom).unwrap(), golden::schedule());
    assert_eq!(Schedule::from_json("\u{feff}"), Err(ScheduleError::Empty));

    let dir = TempDir::new("bom");
    let path = dir.0.join("bom.json");
    std::fs::write(&path, &with_bom).unwrap();
    assert_eq!(Schedule::load(&path).unwrap(), golden::schedule());

    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(golden::text().encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    std::fs::write(&path, utf16).unwrap();
    let e = Schedule::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("UTF-16") && e.contains("save the file as UTF-8"),
        "{e}"
    );

    std::fs::write(&path, b"{\n  \"format\": \"inter\xffleave\"}").unwrap();
    let e = Schedule::load(&path).unwrap_err();
    let ScheduleError::InFile { error, .. } = &e else {
        panic!("expected an error in the file: {e:?}")
    };
    assert!(
        matches!(
            **error,
            ScheduleError::Syntax {
                line: 2,
                column: 19,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(e.to_string().contains("invalid UTF-8"), "{e}");
}

/// Regression (issue 7): an error echoed the bad value whole, so a 100 MB field gave a
/// 100 MB message. Now a value shows at most 64 characters, then its length.
#[test]
fn a_10_mb_bad_value_gives_an_error_line_under_200_bytes() {
    let long = "a".repeat(TEN_MB);
    let cases: [(&str, serde_json::Value); 4] = [
        ("seed", long.clone().into()),
        (
            "crate_version",
            serde_json::Value::from(vec![7; TEN_MB / 2]),
        ),
        ("format", long.clone().into()),
        ("version", long.clone().into()),
    ];
    for (key, value) in cases {
        let e = parse_err(|d| d[key] = value);
        let shown = e.to_string();
        assert!(shown.len() < 200, "{key}: {} bytes: {shown}", shown.len());
        assert!(!shown.contains(&"a".repeat(65)), "{shown}");
    }
    let e = parse_err(|d| d["seed"] = long.clone().into());
    assert!(
        e.to_string()
            .ends_with(&format!("found \"{}… ({TEN_MB} bytes)", "a".repeat(64))),
        "{e}"
    );
    let e = parse_err(|d| d["crate_version"] = vec![7; 3].into());
    assert!(e.to_string().ends_with("found an array of 3 values"), "{e}");

    // A key, a test name compared with another, control characters.
    let key = format!("\"{long}\"");
    let text = format!("{{{key}: 1, {key}: 2}}");
    let shown = Schedule::from_json(&text).unwrap_err().to_string();
    assert!(shown.len() < 200, "{} bytes: {shown}", shown.len());
    let s = Schedule::from_json(&doc_naming(&long)).unwrap();
    let shown = s.check_test("t").unwrap_err().to_string();
    assert!(shown.len() < 200, "{} bytes: {shown}", shown.len());
    let shown = parse_err(|d| d["seed"] = "\u{1b}[31mred\n".into()).to_string();
    assert!(shown.ends_with(r#"found "\u{1b}[31mred\n""#), "{shown}");
}

/// A FIFO named `*.json`, made with `mkfifo`. Nobody ever writes to it.
#[cfg(unix)]
fn fifo(dir: &Path) -> PathBuf {
    let path = dir.join("fifo.json");
    let status = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    path
}

/// Regression (issue 7): loading a FIFO blocked until a writer came, for ever.
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_at_once_without_being_opened() {
    let dir = TempDir::new("fifo");
    let fifo = fifo(&dir.0);
    let e = load_at_once(&fifo).unwrap_err();
    assert_eq!(
        e,
        ScheduleError::NotAFile {
            path: fifo.clone(),
            kind: "a FIFO (named pipe)".into()
        }
    );
    let shown = e.to_string();
    assert!(shown.contains("not a regular file but a FIFO"), "{shown}");
    assert!(shown.contains("it was not read"), "{shown}");

    // Through a symbolic link too: links are followed, then the target is checked.
    let link = dir.0.join("link.json");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    assert!(matches!(
        load_at_once(&link),
        Err(ScheduleError::NotAFile { .. })
    ));
}

/// Regression (issue 7): `/dev/zero` was read until memory ran out, `/dev/urandom` for ever.
#[cfg(unix)]
#[test]
fn devices_are_refused_at_once_without_being_opened() {
    for device in ["/dev/zero", "/dev/urandom", "/dev/null"] {
        let path = Path::new(device);
        if !path.exists() {
            continue;
        }
        let e = load_at_once(path).unwrap_err();
        assert_eq!(
            e,
            ScheduleError::NotAFile {
                path: path.to_owned(),
                kind: "a character device".into()
            },
            "{device}"
        );
    }
}

#[test]
fn a_directory_is_refused() {
    let dir = TempDir::new("dir");
    let path = dir.0.join("dir.json");
    std::fs::create_dir(&path).unwrap();
    assert_eq!(
        load_at_once(&path),
        Err(ScheduleError::NotAFile {
            path,
            kind: "a directory".into()
        })
    );
}

/// A file one byte over the limit is refused by its size, before it is read (the file is
/// sparse: it takes no disk space); one of exactly the limit is read.
#[test]
fn an_oversized_file_is_refused_at_once() {
    let dir = TempDir::new("oversized");
    let path = dir.0.join("big.json");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(Schedule::MAX_FILE_BYTES + 1).unwrap();
    let e = load_at_once(&path).unwrap_err();
    assert_eq!(
        e,
        ScheduleError::TooLarge {
            path: path.clone(),
            size: Schedule::MAX_FILE_BYTES + 1,
            limit: Schedule::MAX_FILE_BYTES
        }
    );
    assert!(e.to_string().contains("it was not read"), "{e}");

    let text = golden::text();
    let padding = Schedule::MAX_FILE_BYTES as usize - text.len();
    std::fs::write(&path, format!("{text}{}", " ".repeat(padding))).unwrap();
    assert_eq!(load_at_once(&path).unwrap(), golden::schedule());
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_to_a_schedule_is_followed() {
    let dir = TempDir::new("link");
    let link = dir.0.join("link.json");
    std::os::unix::fs::symlink(golden::path(), &link).unwrap();
    assert_eq!(Schedule::load(&link).unwrap(), golden::schedule());
}
