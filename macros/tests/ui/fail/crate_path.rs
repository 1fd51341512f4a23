use interleave_test::interleave;

#[interleave(crate = 5)]
fn number() {}

#[interleave(crate = "not a path")]
fn bad_string() {}

fn main() {}
