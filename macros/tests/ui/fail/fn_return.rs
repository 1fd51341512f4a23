use interleave_test::interleave;

#[interleave]
fn returns_option() -> Option<()> {
    Some(())
}

#[interleave]
fn returns_number() -> u32 {
    1
}

fn main() {}
