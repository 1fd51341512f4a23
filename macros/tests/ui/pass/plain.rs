// The attribute with no arguments, on the smallest model.
use interleave_test::interleave;

#[interleave]
fn plain() {
    let t = interleave_test::thread::spawn(|| 1);
    assert_eq!(t.join().unwrap(), 1);
}

fn main() {}
