//! [`Values`]: where a `OnceLock` or `LazyLock` keeps its value, and a `static` one the
//! values of executions other than the first that used it.
//!
//! A value handed out as `&T` may be borrowed for as long as the cell lives (for a `static`,
//! until the process exits), and this crate has no `unsafe` code to end such borrows. So an
//! execution's value is never dropped or overwritten: each execution that initializes the
//! cell keeps its own in the engine's [`PerExecution`] store, dropped with the cell. Which
//! execution is the first the cell's [`OnceCore`](super::once::OnceCore) knows (its object
//! is registered afresh in each execution), so the store is told rather than left to claim
//! it.

use std::sync::OnceLock as StdOnceLock;

use super::once::Site;
use crate::primitive::PerExecution;

/// The values of a once-written cell: the first execution's, and the later executions' (a
/// `static` cell), each found through its [`Site`].
pub(super) struct Values<T> {
    values: PerExecution<StdOnceLock<T>>,
}

impl<T> Values<T> {
    /// No value anywhere.
    pub(super) const fn new() -> Self {
        Values {
            values: PerExecution::new(StdOnceLock::new()),
        }
    }

    /// The first execution's value is `value`.
    pub(super) fn from(value: T) -> Self {
        Values {
            values: PerExecution::new(StdOnceLock::from(value)),
        }
    }

    /// The first execution's value, if it stored one (from any execution or none).
    pub(super) fn first(&self) -> Option<&T> {
        self.values.home().get()
    }

    /// The first execution's value, for exclusive access.
    pub(super) fn first_mut(&mut self) -> &mut StdOnceLock<T> {
        self.values.home_mut()
    }

    /// The first execution's value, taken out.
    pub(super) fn into_first(self) -> Option<T> {
        self.values.into_home().into_inner()
    }

    /// The value stored at `site`, if any (no switch point).
    pub(super) fn get(&self, site: Site) -> Option<&T> {
        self.values.find_at(site.home())?.get()
    }

    /// Stores the value computed at `site`, where no value is stored yet, and returns it.
    pub(super) fn store(&self, site: Site, value: T) -> &T {
        let cell = self.values.get_at(site.home(), StdOnceLock::new);
        if cell.set(value).is_err() {
            unreachable!("only the thread running the initializer stores a value");
        }
        cell.get().expect("the value was just stored")
    }
}
