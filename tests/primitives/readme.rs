//! The README's quick start, compiled and run: the code between the markers is the README's
//! first Rust block, verbatim (a test checks that the README still shows it), so the
//! example a new user copies is one that builds and passes.

// README quick start: begin
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::{Builder, FailureKind, thread};

#[test]
fn the_search_finds_the_lost_increment() {
    let result = Builder::new().seed(1).iterations(1000).check(|| {
        let hits = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let hits = Arc::clone(&hits);
                thread::spawn(move || {
                    let seen = hits.load(Ordering::SeqCst);
                    hits.store(seen + 1, Ordering::SeqCst);
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(hits.load(Ordering::SeqCst), 2);
    });
    let failure = result.expect_err("the lost increment must be found");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(failure.message().contains("left: 1"), "{failure}");
}
// README quick start: end

/// The README shows the quick start above, character for character.
#[test]
fn the_readme_shows_this_quick_start() {
    let this = include_str!("readme.rs");
    let begin = "// README quick start: begin\n";
    let from = this.find(begin).expect("the begin marker") + begin.len();
    let to = this
        .find("// README quick start: end")
        .expect("the end marker");
    let readme = include_str!("../../README.md");
    let shown = format!("```rust\n{}```", &this[from..to]);
    assert!(
        readme.contains(&shown),
        "README.md's quick start differs from tests/primitives/readme.rs; copy one to the other"
    );
}
