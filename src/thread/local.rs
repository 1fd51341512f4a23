//! Thread-local values per model thread: [`LocalKey`] and the [`thread_local!`] macro, with
//! std's API.
//!
//! [`thread_local!`]: crate::thread_local

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use crate::threads::locals::{self, Unavailable};

/// A key to a value that every model thread has its own of, as [`std::thread::LocalKey`].
/// Declare one with [`thread_local!`](crate::thread_local).
///
/// ```
/// use std::cell::Cell;
/// use interleave_test::{thread, thread_local, Builder};
///
/// thread_local! {
///     static CALLS: Cell<u32> = const { Cell::new(0) };
/// }
///
/// Builder::new().iterations(10).check(|| {
///     CALLS.set(CALLS.get() + 1);
///     let t = thread::spawn(|| {
///         CALLS.set(CALLS.get() + 10);
///         CALLS.get()
///     });
///     assert_eq!(t.join().unwrap(), 10, "the spawned thread has a value of its own");
///     assert_eq!(CALLS.get(), 1, "and every execution starts afresh");
/// })
/// .unwrap();
/// ```
///
/// # Differences from std
/// - The value belongs to the *model* thread, on both substrates, and every execution
///   starts with none: it is created on first use in each model thread of each execution.
/// - Values are destroyed, newest first, when their model thread's body is over and before
///   any thread joining it sees it finished; a destructor may use modelled primitives (it
///   runs in the model). A destructor that panics fails the execution (std aborts the
///   process). Teardown after a failure destroys nothing of threads it leaves behind.
/// - Accessing a value during or after its destruction panics, as in std; [`try_with`]
///   reports it with this module's [`AccessError`].
/// - Outside a model (an OS thread that runs no model thread) the value is the OS thread's,
///   as std's is: created on first use, kept for the thread's life.
///
/// [`try_with`]: LocalKey::try_with
pub struct LocalKey<T: 'static> {
    init: fn() -> T,
}

/// The value of a [`LocalKey`] was already destroyed, as [`std::thread::AccessError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessError;

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("already destroyed")
    }
}

impl std::error::Error for AccessError {}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalKey").finish_non_exhaustive()
    }
}

impl<T: 'static> LocalKey<T> {
    /// A key whose value starts as `init()` in every model thread. Use
    /// [`thread_local!`](crate::thread_local) rather than calling this.
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> Self {
        LocalKey { init }
    }

    /// The key's identity: the address of the `static` it is.
    fn key(&'static self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    #[track_caller]
    fn value(&'static self, api: &str, first: impl FnOnce() -> T) -> Result<Rc<T>, AccessError> {
        let value = locals::get_or_init(api, self.key(), || Rc::new(first()) as Rc<dyn Any>)
            .map_err(|Unavailable::Destroyed| AccessError)?;
        Ok(value
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("a key's value has the key's type")))
    }

    /// Runs `f` with the calling model thread's value, creating it first if needed, as
    /// [`std::thread::LocalKey::with`].
    ///
    /// # Panics
    /// If the value was already destroyed (its thread is exiting).
    #[track_caller]
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        match self.try_with(f) {
            Ok(r) => r,
            Err(AccessError) => panic!(
                "cannot access a Thread Local Storage value during or after destruction: a \
                 destructor of a thread-local used another one that was already destroyed"
            ),
        }
    }

    /// Like [`with`](Self::with), but returns an error instead of panicking when the value
    /// was already destroyed.
    #[track_caller]
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        let value = self.value("interleave_test::thread::LocalKey::with", self.init)?;
        Ok(f(&value))
    }

    /// The value, created from `value` (without running the initializer) if the thread has
    /// none yet; `true` if it was created now.
    #[track_caller]
    fn with_initial(&'static self, value: T) -> (Rc<T>, Option<T>) {
        let mut unused = Some(value);
        let rc = self
            .value("interleave_test::thread::LocalKey::set", || {
                unused.take().expect("the initial value is used once")
            })
            .unwrap_or_else(|AccessError| {
                panic!("cannot access a Thread Local Storage value during or after destruction")
            });
        (rc, unused)
    }
}

impl<T: 'static> LocalKey<Cell<T>> {
    /// Sets the value, creating it from `value` without the initializer if the thread has
    /// none yet, as [`std::thread::LocalKey::set`].
    #[track_caller]
    pub fn set(&'static self, value: T) {
        let (cell, unused) = self.with_initial(Cell::new(value));
        if let Some(value) = unused {
            cell.set(value.into_inner());
        }
    }

    /// A copy of the value, as [`std::thread::LocalKey::get`].
    #[track_caller]
    pub fn get(&'static self) -> T
    where
        T: Copy,
    {
        self.with(Cell::get)
    }

    /// Takes the value, leaving `Default::default()`, as [`std::thread::LocalKey::take`].
    #[track_caller]
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(Cell::take)
    }

    /// Replaces the value, returning the old one, as [`std::thread::LocalKey::replace`].
    #[track_caller]
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

impl<T: 'static> LocalKey<RefCell<T>> {
    /// Runs `f` with a shared borrow of the value, as
    /// [`std::thread::LocalKey::with_borrow`].
    #[track_caller]
    pub fn with_borrow<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.with(|cell| f(&cell.borrow()))
    }

    /// Runs `f` with a mutable borrow of the value, as
    /// [`std::thread::LocalKey::with_borrow_mut`].
    #[track_caller]
    pub fn with_borrow_mut<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R,
    {
        self.with(|cell| f(&mut cell.borrow_mut()))
    }

    /// Sets the value, creating it from `value` without the initializer if the thread has
    /// none yet, as [`std::thread::LocalKey::set`].
    #[track_caller]
    pub fn set(&'static self, value: T) {
        let (cell, unused) = self.with_initial(RefCell::new(value));
        if let Some(value) = unused {
            *cell.borrow_mut() = value.into_inner();
        }
    }

    /// Takes the value, leaving `Default::default()`, as [`std::thread::LocalKey::take`].
    #[track_caller]
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(RefCell::take)
    }

    /// Replaces the value, returning the old one, as [`std::thread::LocalKey::replace`].
    #[track_caller]
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

/// Declares thread-local values per model thread, as [`std::thread_local!`]: each
/// `static NAME: T = init;` becomes a [`LocalKey<T>`](crate::thread::LocalKey) whose value
/// every model thread of every execution creates afresh from `init` on first use. The
/// `const { init }` form is accepted (it is initialized the same way).
///
/// Under the coroutine substrate the model threads of an execution share one OS thread, so
/// std's own `thread_local!` values are shared by them; this macro is the portable choice.
/// Switch with one line: `#[cfg(interleave)] use interleave_test::thread_local;`.
///
/// ```
/// use std::cell::RefCell;
/// interleave_test::thread_local! {
///     /// Names seen by this model thread.
///     pub static SEEN: RefCell<Vec<String>> = RefCell::new(Vec::new());
///     static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
/// }
/// interleave_test::Builder::new().iterations(1).check(|| {
///     SEEN.with_borrow_mut(|v| v.push("main".into()));
///     assert_eq!(SEEN.with_borrow(Vec::len), 1);
///     assert_eq!(DEPTH.get(), 0);
/// })
/// .unwrap();
/// ```
#[macro_export]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init; $($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init);
        $crate::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => {
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> = {
            fn __interleave_init() -> $t {
                $init
            }
            $crate::thread::LocalKey::new(__interleave_init)
        };
    };
}
