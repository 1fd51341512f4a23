use interleave_test::interleave;

#[interleave]
fn with_argument(seed: u64) {
    let _ = seed;
}

fn main() {}
