//! The auto traits of the types that switch, in whichever build this is (CI builds it
//! plainly, and `tests/std_switch.rs` of interleave-test under `--cfg interleave`): a type
//! that compiles with the model must compile without it, and the other way round. An
//! assertion that does not hold makes this file fail to compile.

use std::panic::{RefUnwindSafe, UnwindSafe};

use interleave_std::cell::{ConstPtr, MutPtr, UnsafeCell};
use interleave_std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize};
use interleave_std::sync::mpsc::{Receiver, Sender, SyncSender};
use interleave_std::sync::{Arc, Barrier, Condvar, Mutex, Once, OnceLock, RwLock};
use interleave_std::thread::JoinHandle;

fn send_sync<T: ?Sized + Send + Sync>() {}
fn send<T: ?Sized + Send>() {}
fn unwind_safe<T: ?Sized + UnwindSafe>() {}

/// Names `T::check` of the impl for `()` when `T` lacks the trait `$t`; when `T` has it,
/// the second impl applies too and the call is ambiguous, a compile error.
macro_rules! assert_not {
    ($t:path: $($ty:ty),+ $(,)?) => {{
        trait Lacks<A> {
            fn check() {}
        }
        impl<T: ?Sized> Lacks<()> for T {}
        struct Has;
        impl<T: ?Sized + $t> Lacks<Has> for T {}
        $(<$ty as Lacks<_>>::check();)+
    }};
}

#[test]
fn the_cell_is_send_but_not_sync_as_stds() {
    send::<UnsafeCell<u8>>();
    unwind_safe::<UnsafeCell<u8>>();
    assert_not!(Sync: UnsafeCell<u8>, UnsafeCell<[u8]>);
    assert_not!(RefUnwindSafe: UnsafeCell<u8>);
    assert_not!(Send: UnsafeCell<std::rc::Rc<u8>>);
}

#[test]
fn the_cells_guards_are_neither_send_nor_sync() {
    assert_not!(Send: ConstPtr<'static, u8>, MutPtr<'static, u8>);
    assert_not!(Sync: ConstPtr<'static, u8>, MutPtr<'static, u8>);
}

#[test]
fn the_primitives_are_send_and_sync_as_stds() {
    send_sync::<Arc<u8>>();
    send_sync::<Mutex<u8>>();
    send_sync::<RwLock<u8>>();
    send_sync::<Condvar>();
    send_sync::<Barrier>();
    send_sync::<Once>();
    send_sync::<OnceLock<u8>>();
    send_sync::<AtomicUsize>();
    send_sync::<AtomicBool>();
    send_sync::<AtomicPtr<u8>>();
    send_sync::<Sender<u8>>();
    send_sync::<SyncSender<u8>>();
    send::<Receiver<u8>>();
    send_sync::<JoinHandle<u8>>();
    assert_not!(Sync: Receiver<u8>);
    assert_not!(Send: Mutex<std::rc::Rc<u8>>, Arc<std::cell::Cell<u8>>);
    send_sync::<Mutex<std::cell::Cell<u8>>>();
    assert_not!(Sync: RwLock<std::cell::Cell<u8>>, Arc<std::cell::Cell<u8>>);
}

#[test]
fn the_cell_reads_and_writes_through_closures_and_guards() {
    let cell = UnsafeCell::new(1_u32);
    // The pointers are only compared, never dereferenced.
    let via_with = cell.with(|p| p as usize);
    let via_guard = cell.get_mut().as_ptr() as usize;
    assert_eq!(via_with, via_guard);
    assert_eq!(cell.get().as_ptr() as usize, via_with);
    assert_eq!(cell.into_inner(), 1);
    assert_eq!(UnsafeCell::<u8>::default().into_inner(), 0);
    assert_eq!(UnsafeCell::from(7_u8).into_inner(), 7);
    assert_eq!(format!("{:?}", UnsafeCell::new(3)), "UnsafeCell { .. }");
}
