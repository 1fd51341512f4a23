use interleave_test::interleave;

#[interleave]
#[test]
fn tested_twice() {}

fn main() {}
