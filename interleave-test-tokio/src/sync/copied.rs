//! [`Copied`]: the state of a lock made by `const_new` (a `static` Tokio `Mutex` or
//! `RwLock`), which each execution starts with a copy of the value the lock was made with.
//!
//! A `static` lock outlives every execution, but its value must not: an execution that
//! finds what an earlier one left would not replay, and DFS would count states no program
//! run can reach. So a `const_new` lock keeps its initial value, never lent out, and each
//! execution that uses the lock makes its state (a fresh semaphore and a copy of the value)
//! on its first use, kept until the lock is dropped (`PerExecution::get`): the program
//! borrows the value through guards for as long as the lock lives, and this crate has no
//! `unsafe` code to end such borrows, so a `static` lock keeps one small state per
//! execution that used it.
//!
//! A lock made by `new` has its state from the start and never copies: one used by several
//! executions (made outside the model closure) stays the first execution's, and its
//! semaphore then reports the later ones' use as `Misuse`, as before.

use std::sync::OnceLock;

use interleave_engine::primitive::PerExecution;

/// A lock's state `S` per execution, made from a copy of an initial value `T` (see the
/// module).
pub(super) struct Copied<S, T> {
    /// The state of each execution that used the lock; the home one is set from the start
    /// for a lock made by `new`.
    states: PerExecution<OnceLock<S>>,
    /// A `const_new` lock's initial value (in a lock only so that the lock is `Sync` when
    /// `T` is `Send`, as Tokio's), and how to copy it; `None` for a lock made by `new`.
    init: Option<(parking_lot::Mutex<T>, CopyFn<T>)>,
}

/// How a `const_new` lock copies its initial value (`T::clone`).
type CopyFn<T> = fn(&T) -> T;

impl<S, T> Copied<S, T> {
    /// A lock made by `new`, with its state.
    pub(super) fn made(state: S) -> Self {
        Copied {
            states: PerExecution::new(OnceLock::from(state)),
            init: None,
        }
    }

    /// A `const_new` lock: each execution's state is made from `copy(&value)`.
    pub(super) const fn from_init(value: T, copy: CopyFn<T>) -> Self {
        Copied {
            states: PerExecution::new(OnceLock::new()),
            init: Some((parking_lot::Mutex::new(value), copy)),
        }
    }

    /// The calling execution's state, made by `make` from a copy of the initial value on
    /// its first use.
    pub(super) fn get(&self, make: impl FnOnce(T) -> S) -> &S {
        match &self.init {
            None => self
                .states
                .home()
                .get()
                .expect("a lock made by new has its state"),
            Some((value, copy)) => self
                .states
                .get(OnceLock::new)
                .get_or_init(|| make(copy(&*value.lock()))),
        }
    }

    /// The state, for exclusive access (no execution can use it meanwhile): the home one,
    /// made by `make` if no execution has used the lock yet.
    pub(super) fn get_mut(&mut self, make: impl FnOnce(T) -> S) -> &mut S {
        let home = self.states.home_mut();
        if home.get().is_none()
            && let Some((value, copy)) = &self.init
        {
            let _ = home.set(make(copy(&*value.lock())));
        }
        home.get_mut().expect("the home state was just made")
    }

    /// The home state, or, if no execution used the lock, `make` of its initial value.
    pub(super) fn into_state(self, make: impl FnOnce(T) -> S) -> S {
        match self.states.into_home().into_inner() {
            Some(state) => state,
            None => {
                let (value, _) = self.init.expect("a lock made by new has its state");
                make(value.into_inner())
            }
        }
    }

    /// Adds the lock's `data` field to `out`, as Tokio's `Debug` shows it: the value, or
    /// `<locked>` while a guard holds it (`peek` borrows a state's value if it is free).
    pub(super) fn debug_data<'s, V>(
        &'s self,
        out: &mut std::fmt::DebugStruct<'_, '_>,
        peek: impl FnOnce(&'s S) -> Option<V>,
    ) where
        V: std::ops::Deref<Target = T>,
        T: std::fmt::Debug,
    {
        match (self.states.home().get(), &self.init) {
            (Some(state), _) => match peek(state) {
                Some(value) => out.field("data", &&*value),
                None => out.field("data", &format_args!("<locked>")),
            },
            (None, Some((value, _))) => out.field("data", &&*value.lock()),
            (None, None) => unreachable!("a lock made by new has its state"),
        };
    }
}
