use interleave_test::interleave;

#[interleave(clock = "frozen")]
fn an_unknown_clock() {}

#[interleave(clock = true)]
fn a_boolean() {}

fn main() {}
