//! [`PerExecution`] and [`Kept`]: the state of a Tokio primitive that several executions
//! use (a `static` made by a `const_new`, or one made outside the model closure), one per
//! execution.
//!
//! A primitive's state sits behind a modelled lock, which belongs to the first execution
//! that uses it; a later execution that used the same lock would be `Misuse`. So the first
//! execution keeps the state the primitive was made with (its home), and each later one
//! gets a fresh state of its own, made on its first use. Where the later states live:
//! - [`PerExecution`] (`Semaphore`, `Notify`): with the execution (`runtime::exec_state`),
//!   which drops them when it ends: borrowed only inside an operation, through the `Arc`
//!   the execution lends, so a run of many executions does not grow.
//! - [`Kept`] (`OnceCell`, `SetOnce`): in an append-only list (`sync/slots.rs`), found by
//!   execution id, newest first, until the primitive is dropped, since a cell's value may
//!   be borrowed for as long as the cell lives, and this crate has no `unsafe` code to end
//!   such borrows: a `static` cell grows by its state and an index entry per execution
//!   that used it, as a `static` `OnceLock` keeps each execution's value.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::sync::PoisonError;
use crate::sync::slots::Slots;

/// One state per execution that used the primitive, kept until the primitive is dropped
/// (see the module).
pub(super) struct Kept<T> {
    /// The state of the first execution that used the primitive.
    home: T,
    /// That execution: 0 until a first use claims it.
    owner: AtomicU64,
    /// The states of later executions.
    later: OnceLock<Box<Later<T>>>,
}

/// The states of later executions, and which execution has which.
struct Later<T> {
    index: std::sync::Mutex<Vec<(u64, usize)>>,
    states: Slots<T>,
}

impl<T> Kept<T> {
    /// `home` for the first execution that uses it; later ones make their own.
    pub(super) const fn new(home: T) -> Self {
        Kept {
            home,
            owner: AtomicU64::new(0),
            later: OnceLock::new(),
        }
    }

    /// The state of the calling execution, made by `make` on its first use if the
    /// execution is not the first (an OS thread's ambient execution is one like any other).
    pub(super) fn get(&self, make: impl FnOnce() -> T) -> &T {
        match later_execution(&self.owner) {
            None => &self.home,
            Some(exec) => self.later_state(exec, make),
        }
    }

    /// The state of a later execution `exec`, made on its first use.
    fn later_state(&self, exec: u64, make: impl FnOnce() -> T) -> &T {
        let later = self.later.get_or_init(|| {
            Box::new(Later {
                index: std::sync::Mutex::new(Vec::new()),
                states: Slots::new(),
            })
        });
        let mut index = later.index.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = match index.iter().rev().find(|&&(e, _)| e == exec) {
            Some(&(_, slot)) => slot,
            None => {
                let (slot, _) = later.states.push(make());
                index.push((exec, slot));
                slot
            }
        };
        drop(index);
        later
            .states
            .get(slot)
            .expect("a pushed slot holds its state")
    }

    /// The home state (the first execution's, or the only one).
    pub(super) fn home(&self) -> &T {
        &self.home
    }

    /// The home state, mutably: with exclusive access no later execution can use it.
    pub(super) fn home_mut(&mut self) -> &mut T {
        &mut self.home
    }

    /// The home state.
    pub(super) fn into_home(self) -> T {
        self.home
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.home.fmt(f)
    }
}

/// The calling execution, unless it is the one that owns the home state (claimed by the
/// first use: `owner` is 0 until then).
fn later_execution(owner: &AtomicU64) -> Option<u64> {
    let (exec, _) = crate::runtime::try_ids()?;
    let claimed = match owner.load(Ordering::Acquire) {
        0 => match owner.compare_exchange(0, exec, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => exec,
            Err(owner) => owner,
        },
        owner => owner,
    };
    (claimed != exec).then_some(exec)
}

/// One state per execution that used the primitive; a later execution's lives with that
/// execution (see the module).
pub(super) struct PerExecution<T> {
    /// The state of the first execution that used the primitive.
    home: T,
    /// That execution: 0 until a first use claims it.
    owner: AtomicU64,
    /// The primitive's key among the states an execution holds: 0 until a later execution
    /// first uses it.
    key: AtomicU64,
}

/// The calling execution's state of a [`PerExecution`]: the home state, or the execution's
/// own, which it lends for the operation.
pub(super) enum StateRef<'a, T> {
    /// The first execution's (or a primitive's used by one execution only).
    Home(&'a T),
    /// A later execution's, which holds it and drops it when it ends.
    Lent(Arc<T>),
}

impl<T> std::ops::Deref for StateRef<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            StateRef::Home(home) => home,
            StateRef::Lent(lent) => lent,
        }
    }
}

impl<T: Send + Sync + 'static> PerExecution<T> {
    /// `home` for the first execution that uses it; later ones make their own.
    pub(super) const fn new(home: T) -> Self {
        PerExecution {
            home,
            owner: AtomicU64::new(0),
            key: AtomicU64::new(0),
        }
    }

    /// The state of the calling execution, made by `make` on its first use if the
    /// execution is not the first.
    pub(super) fn get(&self, make: impl FnOnce() -> T) -> StateRef<'_, T> {
        let Some(_) = later_execution(&self.owner) else {
            return StateRef::Home(&self.home);
        };
        static NEXT_KEY: AtomicU64 = AtomicU64::new(1);
        let key = match self.key.load(Ordering::Acquire) {
            0 => {
                let new = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
                match self
                    .key
                    .compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => new,
                    Err(key) => key,
                }
            }
            key => key,
        };
        StateRef::Lent(crate::runtime::exec_state(key, make))
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for PerExecution<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.home.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    static MADE: AtomicUsize = AtomicUsize::new(0);
    static DROPPED: AtomicUsize = AtomicUsize::new(0);

    /// A state that counts its drops, made by execution `.0` (0: the home state).
    struct Counted(u64);

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPPED.fetch_add(1, Ordering::SeqCst);
        }
    }

    static STATE: PerExecution<Counted> = PerExecution::new(Counted(0));

    /// Each later execution gets a state of its own, the same at each look, and it is
    /// dropped when the execution ends: a run of many executions keeps none of them.
    #[test]
    fn a_later_executions_state_is_its_own_and_dropped_with_it() {
        use crate::Substrate::{Coroutines, Threads};
        let runs = [1, 2]
            .into_iter()
            .flat_map(|p| [(p, Coroutines), (p, Threads)]);
        for (n, (parallelism, substrate)) in runs.enumerate() {
            let (made, dropped) = (MADE.load(Ordering::SeqCst), DROPPED.load(Ordering::SeqCst));
            let report = crate::Builder::new()
                .iterations(40)
                .parallelism(parallelism)
                .substrate(substrate)
                .check(|| {
                    // A decision: a model with none ends after two executions.
                    crate::choose(2);
                    let (exec, _) = crate::runtime::try_ids().unwrap();
                    let first = STATE.get(|| {
                        MADE.fetch_add(1, Ordering::SeqCst);
                        Counted(exec)
                    });
                    let again = STATE.get(|| unreachable!("made once per execution"));
                    assert!(std::ptr::eq(&*first, &*again));
                    assert!(first.0 == exec || matches!(first, StateRef::Home(_)));
                })
                .unwrap();
            assert_eq!(report.executions, 40);
            let made = MADE.load(Ordering::SeqCst) - made;
            // Only the first execution of the process uses the home state.
            assert_eq!(made, if n == 0 { 39 } else { 40 }, "{substrate:?}");
            assert_eq!(DROPPED.load(Ordering::SeqCst) - dropped, made);
        }
    }
}
