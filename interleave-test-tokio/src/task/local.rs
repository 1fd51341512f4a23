//! Task-local values, as `tokio::task_local!`: a value set for the extent of a future
//! ([`LocalKey::scope`]) or of a closure ([`LocalKey::sync_scope`]).
//!
//! The value lives in a model thread-local (`interleave_test::thread_local!`) of the
//! thread that polls the future: each poll of a [`TaskLocalFuture`] moves its value into
//! that slot and back out when the poll returns (or unwinds). A thread polls one task at a
//! time, and a poll runs to its end on its thread even when the model switches to another
//! thread inside it, so the slot holds the polled task's value for exactly that poll.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use interleave_engine::primitive;
use pin_project_lite::pin_project;

/// Declares task-local keys, as `tokio::task_local!`: `static NAME: Type;`, each a
/// [`LocalKey`] with no value until a scope sets one.
///
/// ```
/// use interleave_test_tokio as tokio;
///
/// tokio::task_local! {
///     static REQUEST: u32;
/// }
///
/// interleave_test::check_async(|| async {
///     let seen = REQUEST.scope(7, async { REQUEST.get() }).await;
///     assert_eq!(seen, 7);
///     assert!(REQUEST.try_with(|_| ()).is_err(), "no value outside the scope");
/// })
/// .unwrap();
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __tokio_task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $(#[$attr])* $vis static $name: $crate::task::LocalKey<$t> = {
            fn __interleave_init() -> ::std::cell::RefCell<::std::option::Option<$t>> {
                ::std::cell::RefCell::new(::std::option::Option::None)
            }
            $crate::task::LocalKey::__new($crate::__interleave::thread::LocalKey::new(__interleave_init))
        };
        $crate::__tokio_task_local!($($rest)*);
    };
    // The last key may go without its `;`, as in Tokio's macro.
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__tokio_task_local!($(#[$attr])* $vis static $name: $t;);
    };
}

/// A task-local key, as `tokio::task::LocalKey`; declare one with
/// [`task_local!`](crate::task_local).
pub struct LocalKey<T: 'static> {
    slot: interleave_test::thread::LocalKey<RefCell<Option<T>>>,
}

/// The key has no value here (outside every scope), as `tokio::task::AccessError`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError(());

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task-local value not set")
    }
}

impl std::error::Error for AccessError {}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LocalKey { .. }")
    }
}

impl<T: 'static> LocalKey<T> {
    /// Made by `task_local!`.
    #[doc(hidden)]
    pub const fn __new(slot: interleave_test::thread::LocalKey<RefCell<Option<T>>>) -> Self {
        LocalKey { slot }
    }

    /// `future` with the key set to `value` while it is polled (and while it is dropped).
    pub fn scope<F: Future>(&'static self, value: T, future: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture {
            key: self,
            value: Some(value),
            future: Some(future),
        }
    }

    /// Runs `f` with the key set to `value`.
    #[track_caller]
    pub fn sync_scope<F: FnOnce() -> R, R>(&'static self, value: T, f: F) -> R {
        let mut value = Some(value);
        self.enter(&mut value, f)
    }

    /// Runs `f` with the value.
    ///
    /// # Panics
    /// Outside every scope of the key, as Tokio's.
    #[track_caller]
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        self.try_with(f).unwrap_or_else(|AccessError(())| {
            panic!("cannot access a task-local storage value without setting it first")
        })
    }

    /// Runs `f` with the value, or returns an error outside every scope of the key.
    #[track_caller]
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        self.slot.with(|slot| match &*slot.borrow() {
            Some(value) => Ok(f(value)),
            None => Err(AccessError(())),
        })
    }

    /// Moves `value` into this thread's slot for the extent of `f`, and back out after it,
    /// even if `f` panics.
    #[track_caller]
    fn enter<R>(&'static self, value: &mut Option<T>, f: impl FnOnce() -> R) -> R {
        struct Restore<'a, T: 'static> {
            key: &'static LocalKey<T>,
            value: &'a mut Option<T>,
        }
        impl<T: 'static> Drop for Restore<'_, T> {
            fn drop(&mut self) {
                // The thread's locals outlive its polls; if they are gone the value is lost
                // with them, as the thread is ending.
                let _ = self.key.slot.try_with(|slot| self.swap(slot));
            }
        }
        impl<T: 'static> Restore<'_, T> {
            fn swap(&mut self, slot: &RefCell<Option<T>>) {
                let mut slot = slot.try_borrow_mut().unwrap_or_else(|_| {
                    panic!(
                        "cannot enter a task-local scope while the task-local storage is \
                         borrowed (inside `with` of the same key)"
                    )
                });
                std::mem::swap(&mut *slot, self.value);
            }
        }
        let mut restore = Restore { key: self, value };
        self.slot.with(|slot| restore.swap(slot));
        f()
    }
}

impl<T: Clone + 'static> LocalKey<T> {
    /// A copy of the value.
    ///
    /// # Panics
    /// Outside every scope of the key.
    #[track_caller]
    pub fn get(&'static self) -> T {
        self.with(T::clone)
    }

    /// A copy of the value, or an error outside every scope of the key, as `try_get`.
    #[track_caller]
    pub fn try_get(&'static self) -> Result<T, AccessError> {
        self.try_with(T::clone)
    }
}

pin_project! {
    /// A future run with a task-local value set, as `tokio::task::futures::TaskLocalFuture`;
    /// made by [`LocalKey::scope`].
    pub struct TaskLocalFuture<T: 'static, F> {
        key: &'static LocalKey<T>,
        value: Option<T>,
        #[pin]
        future: Option<F>,
    }

    impl<T: 'static, F> PinnedDrop for TaskLocalFuture<T, F> {
        fn drop(this: Pin<&mut Self>) {
            // The future is dropped inside its scope, as Tokio does.
            let this = this.project();
            if this.future.is_some() && primitive::in_model() {
                let mut future = this.future;
                this.key.enter(this.value, || future.set(None));
            }
        }
    }
}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// Takes the value out of the scope (`None` once taken, or while the future is
    /// polled).
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        self.project().value.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    #[track_caller]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let mut future = this.future;
        this.key.enter(this.value, || {
            let poll = future
                .as_mut()
                .as_pin_mut()
                .expect("a TaskLocalFuture polled after it completed")
                .poll(cx);
            if poll.is_ready() {
                future.set(None);
            }
            poll
        })
    }
}

impl<T: 'static + fmt::Debug, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture")
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}
