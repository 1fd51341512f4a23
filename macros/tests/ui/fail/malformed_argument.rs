use interleave_test::interleave;

#[interleave(iterations)]
fn without_value() {}

#[interleave(iterations(5))]
fn called() {}

#[interleave(seed: 5)]
fn colon() {}

fn main() {}
