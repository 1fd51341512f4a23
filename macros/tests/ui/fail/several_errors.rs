// Every mistake is reported at once: the arguments' and the function's.
use interleave_test::interleave;

#[interleave(iterations = 0, colour = "blue", depth = 2)]
async fn everything_wrong(x: u8) -> u8 {
    x
}

fn main() {}
