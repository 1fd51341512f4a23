//! What a schedule records besides its decisions (a module of `tests/schedule_json.rs`): the
//! signature of its failure, by which a stored schedule is judged later, and the build of
//! the test binary, which `cargo interleave` applies. Both read back exactly; a wrong type,
//! or a failure kind the crate does not know, is a field error; a file without them (older
//! versions) reads with `None`.

use interleave_test::{FailureKind, Schedule, ScheduleError};

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
