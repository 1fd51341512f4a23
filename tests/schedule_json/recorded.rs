//! What a schedule records besides its decisions (a module of `tests/schedule_json.rs`): the
//! signature of its failure, by which a stored schedule is judged later, and the build of
//! the test binary, which `cargo interleave` applies. Both read back exactly; a wrong type,
//! or a failure kind the crate does not know, is a field error; a file without them (older
//! versions) reads with `None`.

use interleave_test::{Clock, FailureKind, Schedule, ScheduleError};

use super::{golden, parse_err, valid_doc};

#[test]
fn the_golden_failure_records_its_signature_without_places() {
    let s = golden::schedule();
    let signature = s.failure().expect("a failure's schedule records it");
    assert_eq!(signature.kind(), FailureKind::Panic);
    assert_eq!(signature.thread(), Some("main"));
    assert_eq!(signature.thread_id(), Some(0));
    assert!(
        signature
            .what()
            .starts_with("assertion `left == right` failed: an update was lost"),
        "{signature}"
    );
    assert!(!signature.what().contains(".rs:"), "{signature}");
    assert_eq!(
        golden::failure().schedule().failure(),
        Some(signature),
        "a new run records the same"
    );
}

#[test]
fn signature_and_build_read_back() {
    let mut doc = valid_doc();
    doc["failure_kind"] = "data race".into();
    doc["failure_thread"] = "reader".into();
    doc["failure_thread_id"] = 2.into();
    doc["failure_what"] = "data race on UnsafeCell #_".into();
    doc["cfg_interleave"] = true.into();
    doc["release"] = false.into();
    let s = Schedule::from_json(&doc.to_string()).unwrap();
    let f = s.failure().unwrap();
    assert_eq!(
        (f.kind(), f.thread(), f.thread_id(), f.what()),
        (
            FailureKind::DataRace,
            Some("reader"),
            Some(2),
            "data race on UnsafeCell #_"
        )
    );
    assert_eq!(
        (s.build().cfg_interleave(), s.build().release()),
        (Some(true), Some(false))
    );
    assert_eq!(Schedule::from_json(&s.to_json()).unwrap(), s);
}

#[test]
fn a_file_without_them_reads_with_none() {
    let s = Schedule::from_json(&valid_doc().to_string()).unwrap();
    assert_eq!(s.failure(), None);
    assert_eq!(
        (s.build().cfg_interleave(), s.build().release()),
        (None, None)
    );
}

#[test]
fn wrong_types_are_field_errors() {
    let cases: [(&str, serde_json::Value, &str); 5] = [
        ("release", "yes".into(), "should be true or false"),
        ("cfg_interleave", 1.into(), "should be true or false"),
        ("failure_kind", 3.into(), "should be a string"),
        (
            "failure_kind",
            "meltdown".into(),
            "should be one of \"panic\", \"deadlock\"",
        ),
        (
            "failure_thread_id",
            "two".into(),
            "should be a non-negative integer",
        ),
    ];
    for (key, value, says) in cases {
        let err = parse_err(|doc| {
            doc["failure_kind"] = "panic".into();
            doc[key] = value.clone();
        });
        match &err {
            ScheduleError::Field { path, problem } => {
                assert_eq!(path, key, "{err}");
                assert!(problem.starts_with(says), "{key}: {err}");
            }
            other => panic!("{key}: {other:?}"),
        }
    }
}

/// The clock a run used is recorded only when it is the paused one: a file without
/// `clock`, the golden one included, ran on the loaded clock, and a file written on it
/// reads and writes as before the field existed.
#[test]
fn the_clock_reads_back_and_is_the_loaded_one_when_absent() {
    assert_eq!(golden::schedule().clock(), Clock::Loaded);
    assert!(!golden::text().contains("\"clock\""));
    let loaded = Schedule::from_json(&valid_doc().to_string()).unwrap();
    assert_eq!(loaded.clock(), Clock::Loaded);
    assert!(
        !loaded.to_json().contains("\"clock\""),
        "{}",
        loaded.to_json()
    );
    for (written, clock) in [("paused", Clock::Paused), ("loaded", Clock::Loaded)] {
        let mut doc = valid_doc();
        doc["clock"] = written.into();
        let s = Schedule::from_json(&doc.to_string()).unwrap();
        assert_eq!(s.clock(), clock);
        assert_eq!(Schedule::from_json(&s.to_json()).unwrap(), s);
    }
    let mut doc = valid_doc();
    doc["clock"] = "paused".into();
    let paused = Schedule::from_json(&doc.to_string()).unwrap().to_json();
    assert!(paused.contains("\n  \"clock\": \"paused\",\n"), "{paused}");
}

#[test]
fn an_unknown_clock_is_a_field_error() {
    let cases = [
        (
            serde_json::Value::from("frozen"),
            "should be \"loaded\" or \"paused\", found \"frozen\"",
        ),
        (
            serde_json::Value::from(true),
            "should be a string, found true",
        ),
    ];
    for (value, says) in cases {
        let err = parse_err(|doc| doc["clock"] = value.clone());
        assert_eq!(
            err.to_string(),
            format!("invalid schedule: field `clock` {says}")
        );
    }
}
