//! Property test of the JSON round trip (a module of `tests/schedule_json.rs`): random
//! documents that follow the format parse to exactly the values written, and
//! `from_json(to_json(s)) == s` with `to_json` stable.

use interleave_test::Schedule;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// An optional field: absent (`None`), `null` (`Some(None)`), or a value.
type Opt<T> = Option<Option<T>>;

#[derive(Clone, Debug)]
struct GenDecision {
    thread: usize,
    step: u64,
    of: usize,
    name: Opt<String>,
    op: String,
    at: String,
}

#[derive(Clone, Debug)]
struct GenSchedule {
    crate_version: String,
    test: Opt<String>,
    strategy: String,
    seed: Opt<u64>,
    iteration: u64,
    decisions: Vec<GenDecision>,
}

/// Text that JSON must escape or encode: quotes, backslashes, control characters,
/// non-ASCII letters and astral-plane characters, as well as arbitrary strings.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\"\\\\/\\x00-\\x1f\\x7f a-z0-9:.éß漢字🦀\u{2028}\u{feff}]{0,24}",
        Just(String::new()),
        Just("\"quoted\" \\back\\slash\\ \n\t\r \u{0}".to_owned()),
        Just("src/lib.rs:12:5".to_owned()),
    ]
}

fn opt<T: std::fmt::Debug + Clone>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Opt<T>> {
    prop_oneof![Just(None), Just(Some(None)), s.prop_map(|v| Some(Some(v)))]
}

fn big_u64() -> impl Strategy<Value = u64> {
    prop_oneof![any::<u64>(), Just(u64::MAX), Just(0u64), 0u64..10]
}

fn decision() -> impl Strategy<Value = GenDecision> {
    let thread = prop_oneof![0usize..8, any::<usize>()];
    let of = prop_oneof![2usize..8, 2usize..=usize::MAX];
    (thread, big_u64(), of, opt(text()), text(), text()).prop_map(
        |(thread, step, of, name, op, at)| GenDecision {
            thread,
            step,
            of,
            name,
            op,
            at,
        },
    )
}

fn schedule() -> impl Strategy<Value = GenSchedule> {
    (
        text(),
        opt(text()),
        text(),
        opt(big_u64()),
        big_u64(),
        prop::collection::vec(decision(), 0..200),
    )
        .prop_map(
            |(crate_version, test, strategy, seed, iteration, decisions)| GenSchedule {
                crate_version,
                test,
                strategy,
                seed,
                iteration,
                decisions,
            },
        )
}

fn put<T: Into<Value> + Clone>(m: &mut Map<String, Value>, key: &str, v: &Opt<T>) {
    match v {
        None => {}
        Some(None) => {
            m.insert(key.to_owned(), Value::Null);
        }
        Some(Some(v)) => {
            m.insert(key.to_owned(), v.clone().into());
        }
    }
}

/// The JSON text of a generated schedule, written by `serde_json` (not by the crate).
fn to_text(g: &GenSchedule, pretty: bool) -> String {
    let decisions: Vec<Value> = g
        .decisions
        .iter()
        .map(|d| {
            let mut m = Map::new();
            m.insert("thread".into(), json!(d.thread));
            m.insert("step".into(), json!(d.step));
            m.insert("of".into(), json!(d.of));
            put(&mut m, "name", &d.name);
            m.insert("op".into(), json!(d.op));
            m.insert("at".into(), json!(d.at));
            Value::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("format".into(), json!("interleave-test-schedule"));
    m.insert("version".into(), json!(7));
    m.insert("crate_version".into(), json!(g.crate_version));
    put(&mut m, "test", &g.test);
    m.insert("strategy".into(), json!(g.strategy));
    put(&mut m, "seed", &g.seed);
    m.insert("iteration".into(), json!(g.iteration));
    m.insert("decisions".into(), Value::Array(decisions));
    let doc = Value::Object(m);
    if pretty {
        serde_json::to_string_pretty(&doc).unwrap()
    } else {
        doc.to_string()
    }
}

/// Every field of the parsed schedule is the generated value.
fn assert_fields(s: &Schedule, g: &GenSchedule) {
    assert_eq!(s.crate_version(), g.crate_version);
    assert_eq!(s.test(), g.test.clone().flatten().as_deref());
    assert_eq!(s.strategy(), g.strategy);
    assert_eq!(s.seed(), g.seed.flatten());
    assert_eq!(s.iteration(), g.iteration);
    assert_eq!(s.decisions().len(), g.decisions.len());
    for (d, e) in s.decisions().iter().zip(&g.decisions) {
        assert_eq!(d.thread(), e.thread);
        assert_eq!(d.step(), e.step);
        assert_eq!(d.options(), e.of);
        assert_eq!(d.name(), e.name.clone().flatten().as_deref());
        assert_eq!(d.op(), e.op);
        assert_eq!(d.location(), e.at);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn json_round_trip_is_exact_and_stable(g in schedule(), pretty in any::<bool>()) {
        let s = Schedule::from_json(&to_text(&g, pretty))
            .unwrap_or_else(|e| panic!("a well-formed schedule was rejected: {e}"));
        assert_fields(&s, &g);

        let text = s.to_json();
        prop_assert_eq!(&text, &s.to_json(), "to_json is not stable");
        prop_assert!(text.ends_with("}\n"), "to_json should end with a newline");
        let back = Schedule::from_json(&text)
            .unwrap_or_else(|e| panic!("to_json wrote text that from_json rejects: {e}\n{text}"));
        prop_assert_eq!(&back, &s);
        prop_assert_eq!(back.to_json(), text);
    }
}
