use interleave_test::interleave;

#[interleave]
fn generic<T: Default>() {
    let _ = T::default();
}

#[interleave]
fn where_clause()
where
    u8: Copy,
{
}

fn main() {}
