// Attributes after `#[interleave]` stay on the test, in order.
#![deny(unused_attributes, unused_doc_comments)]

use interleave_test::interleave;

/// A doc comment.
#[interleave]
/// Another after the attribute.
fn documented() {}

#[interleave(iterations = 10)]
#[should_panic(expected = "interleave-test found a panic")]
fn should_panic_with_expected() {
    panic!("boom");
}

#[interleave]
#[ignore = "slow"]
fn ignored() {}

#[interleave]
#[cfg(any())]
fn configured_out() {
    this_function_does_not_exist();
}

#[interleave]
#[allow(clippy::let_unit_value)]
pub(crate) fn with_visibility() {}

fn main() {}
