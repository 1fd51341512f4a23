//! [`PerExecution`]: the state of a Tokio primitive that several executions use (a
//! `static` made by a `const_new`, or one made outside the model closure), one per
//! execution.
//!
//! A primitive's state sits behind a modelled lock, which belongs to the first execution
//! that uses it; a later execution that used the same lock would be `Misuse`. So the first
//! execution keeps the state the primitive was made with (its home), and each later one
//! gets a fresh state of its own, made on its first use. A later state may be borrowed for
//! as long as the primitive lives (an `OnceCell`'s value, a permit), and this crate has no
//! `unsafe` code to end such borrows: states are never moved or dropped before the
//! primitive. They sit in an append-only list (`sync/slots.rs`), found by execution id,
//! newest first (an execution looks for its own, most often the newest). A `static`
//! primitive so grows by its state (under 200 bytes for a `Semaphore` or `Notify`) and
//! an index entry per execution that used it, until the process exits, as a `static`
//! `OnceLock` keeps each execution's value.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::PoisonError;
use crate::sync::slots::Slots;

/// One state per execution that used the primitive (see the module).
pub(super) struct PerExecution<T> {
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

impl<T> PerExecution<T> {
    /// `home` for the first execution that uses it; later ones make their own.
    pub(super) const fn new(home: T) -> Self {
        PerExecution {
            home,
            owner: AtomicU64::new(0),
            later: OnceLock::new(),
        }
    }

    /// The state of the calling execution, made by `make` on its first use if the
    /// execution is not the first. Outside a model, the home state (the operation's
    /// switch point then says what is wrong).
    pub(super) fn get(&self, make: impl FnOnce() -> T) -> &T {
        let Some((exec, _)) = crate::runtime::try_ids() else {
            return &self.home;
        };
        let owner = match self.owner.load(Ordering::Acquire) {
            0 => match self
                .owner
                .compare_exchange(0, exec, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => exec,
                Err(owner) => owner,
            },
            owner => owner,
        };
        if owner == exec {
            return &self.home;
        }
        self.later_state(exec, make)
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

impl<T: std::fmt::Debug> std::fmt::Debug for PerExecution<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.home.fmt(f)
    }
}
