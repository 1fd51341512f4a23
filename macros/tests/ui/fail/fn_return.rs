use interleave_test::interleave;

#[interleave]
fn returns_result() -> Result<(), String> {
    Ok(())
}

#[interleave]
fn returns_number() -> u32 {
    1
}

fn main() {}
