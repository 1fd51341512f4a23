//! The object arena: every modelled primitive is registered in the execution that first uses
//! it, and its scheduling state (owner, waiters, ...) lives here, type-erased.
//!
//! Primitives are created with `const fn new` and register lazily, so a primitive created
//! outside the model (a `static`) still works in the first execution that uses it and is
//! reported as misuse in any later one, instead of carrying stale state across executions.

use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::{Loc, ObjId, OpKind, Tid};

/// Scheduling state of one kind of primitive.
pub(crate) trait ObjectState: Any + Send {
    /// Threads that hold the object and where they took it (for deadlock reports).
    fn holders(&self) -> Vec<(Tid, Loc)> {
        Vec::new()
    }

    /// Whether operation `kind` of thread `me` on the object can take effect now. A thread
    /// whose next operation cannot is not offered to the strategy: it is blocked.
    fn enabled(&self, kind: OpKind, me: Tid) -> bool {
        let _ = (kind, me);
        true
    }
}

/// One registered object.
pub(crate) struct ObjectSlot {
    /// "Mutex", "AtomicUsize", ...
    pub(crate) kind: &'static str,
    /// Where the object was first used in this execution.
    pub(crate) first_use: Loc,
    pub(crate) state: Option<Box<dyn ObjectState>>,
}

/// Embedded in every primitive: which execution it belongs to and its id there.
#[derive(Debug)]
pub(crate) struct ObjectHandle {
    exec: AtomicU64,
    id: AtomicUsize,
    kind: &'static str,
    /// The object's state when it registers, for kinds whose fresh state is not "every
    /// operation can take effect" (an empty channel).
    init: Option<fn() -> Box<dyn ObjectState>>,
}

/// A primitive was used in an execution other than the one it was first used in.
#[derive(Debug)]
pub(crate) struct ForeignObject {
    pub(crate) kind: &'static str,
}

impl ObjectHandle {
    /// A handle not yet registered anywhere.
    pub(crate) const fn new(kind: &'static str) -> Self {
        ObjectHandle {
            exec: AtomicU64::new(0),
            id: AtomicUsize::new(0),
            kind,
            init: None,
        }
    }

    /// A handle whose object starts with the state `init` returns when it registers.
    pub(crate) const fn with_state(kind: &'static str, init: fn() -> Box<dyn ObjectState>) -> Self {
        ObjectHandle {
            init: Some(init),
            ..ObjectHandle::new(kind)
        }
    }

    /// The kind name given at creation.
    pub(crate) fn kind(&self) -> &'static str {
        self.kind
    }

    /// The object's id in execution `exec`, registering it there on first use.
    pub(crate) fn resolve(
        &self,
        exec: u64,
        objects: &mut Vec<ObjectSlot>,
        loc: Loc,
    ) -> Result<ObjId, ForeignObject> {
        // Fast path: already registered here (only this execution's state lock holder
        // stores the id, before any later load of it).
        if self.exec.load(Ordering::Acquire) == exec {
            return Ok(self.id.load(Ordering::Acquire));
        }
        // Two executions may run at once: claim the handle with a compare-exchange so that
        // exactly one registers it and the other sees a foreign object.
        match self
            .exec
            .compare_exchange(0, exec, Ordering::AcqRel, Ordering::Acquire)
        {
            Err(e) if e == exec => Ok(self.id.load(Ordering::Acquire)),
            Ok(_) => {
                let id = objects.len();
                objects.push(ObjectSlot {
                    kind: self.kind,
                    first_use: loc,
                    state: self.init.map(|init| init()),
                });
                self.id.store(id, Ordering::Release);
                Ok(id)
            }
            Err(_) => Err(ForeignObject { kind: self.kind }),
        }
    }
}

impl ObjectSlot {
    /// The state of this object, created on first access.
    pub(crate) fn state<S: ObjectState + Default>(&mut self) -> &mut S {
        let boxed = self.state.get_or_insert_with(|| Box::new(S::default()));
        let any: &mut dyn Any = boxed.as_mut();
        any.downcast_mut::<S>()
            .expect("an object's state keeps the type it was created with")
    }

    /// Whether operation `kind` of thread `me` can take effect now (see
    /// [`ObjectState::enabled`]); an object with no state yet allows everything.
    pub(crate) fn enabled(&self, kind: OpKind, me: Tid) -> bool {
        self.state.as_ref().is_none_or(|s| s.enabled(kind, me))
    }

    /// Holders of the object, if its state tracks any.
    pub(crate) fn holders(&self) -> Vec<(Tid, Loc)> {
        self.state.as_ref().map(|s| s.holders()).unwrap_or_default()
    }
}
