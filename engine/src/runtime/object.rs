//! The object arena: every modelled primitive is registered in the execution that first uses
//! it, and its scheduling state (owner, waiters, ...) lives here, type-erased.
//!
//! Primitives are created with `const fn new` and register lazily in the first execution
//! that uses them. A primitive created outside the model (a `static`) is used by every
//! execution: one whose state the runtime holds entirely (an atomic, whose values live in
//! the memory model; a condvar or barrier, which hold only scheduling state; a one-time
//! initializer, which keeps a later execution's status here and its value in slots of its
//! own) is registered afresh in each execution that uses it, found again through a table
//! of such registrations kept by the execution (see [`Objects`]), so that executions
//! running at once each see it in its initial state and share nothing but the handle.
//! Any other kind (a `Mutex<T>` holds a `T` the runtime cannot restore) is reported as
//! misuse in every execution but the first, instead of carrying stale state.

use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::{Loc, ObjId, OpKind, Tid};

/// Scheduling state of one kind of primitive.
pub trait ObjectState: Any + Send {
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
    /// Registered by an execution after an earlier one had: a `static` (or a value that
    /// outlived its execution), which starts from its initial state here.
    pub(crate) from_earlier: bool,
}

/// The objects registered in one execution, by id, and the ids of the restorable
/// primitives it registered after an earlier execution had (by the primitive's address,
/// sorted: few per model, looked up at each of their operations).
#[derive(Default)]
pub(crate) struct Objects {
    slots: Vec<ObjectSlot>,
    later: Vec<(usize, ObjId)>,
}

impl Objects {
    /// No objects, room for `n`.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Objects {
            slots: Vec::with_capacity(n),
            later: Vec::new(),
        }
    }

    /// How many objects are registered.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Registers `slot` and returns its id.
    pub(crate) fn push(&mut self, slot: ObjectSlot) -> ObjId {
        self.slots.push(slot);
        self.slots.len() - 1
    }
}

impl std::ops::Index<ObjId> for Objects {
    type Output = ObjectSlot;

    fn index(&self, id: ObjId) -> &ObjectSlot {
        &self.slots[id]
    }
}

impl std::ops::IndexMut<ObjId> for Objects {
    fn index_mut(&mut self, id: ObjId) -> &mut ObjectSlot {
        &mut self.slots[id]
    }
}

/// Embedded in every primitive: which execution it belongs to and its id there.
#[derive(Debug)]
pub struct ObjectHandle {
    exec: AtomicU64,
    id: AtomicUsize,
    kind: &'static str,
    /// The object's state when it registers, for kinds whose fresh state is not "every
    /// operation can take effect" (an empty channel).
    init: Option<fn() -> Box<dyn ObjectState>>,
    /// Whether the runtime holds all of the primitive's state, so that each execution can
    /// start it afresh (see the module).
    restorable: bool,
    /// How a `static` of a primitive that is not restorable can start afresh in every
    /// execution, for the misuse report of one used in two.
    fresh: Option<Fresh>,
}

/// How a `static` primitive can start afresh in every execution, as a report advises: in a
/// `LazyLock<ty>` made by `ty::new(..)` (the path without the parameters), or as `or` adds
/// (" (or `T::const_new(..)`, ...)").
#[derive(Clone, Copy, Debug)]
pub struct Fresh {
    /// The primitive's type as the program writes it, with its parameters (`Mutex<T>`,
    /// `tokio::sync::Mutex<T>`, a user's `Semaphore`).
    pub ty: &'static str,
    /// Another way, after the `LazyLock` (or "").
    pub or: &'static str,
}

/// A primitive was used in an execution other than the one it was first used in.
#[derive(Debug)]
pub(crate) struct ForeignObject {
    pub(crate) kind: &'static str,
    /// How a `static` of it could start afresh in every execution, if it can.
    pub(crate) fresh: Option<Fresh>,
    /// The execution that first used it.
    pub(crate) owner: u64,
}

impl ObjectHandle {
    /// A handle not yet registered anywhere, of a primitive whose type is named `kind`
    /// (see [`ObjectHandle::fresh`]).
    pub const fn new(kind: &'static str) -> Self {
        ObjectHandle {
            exec: AtomicU64::new(0),
            id: AtomicUsize::new(0),
            kind,
            init: None,
            restorable: false,
            fresh: Some(Fresh { ty: kind, or: "" }),
        }
    }

    /// The handle, with how a `static` of its primitive can start afresh in every execution
    /// (`None`: it cannot, as a channel's end, made by a function); by default, in a
    /// `LazyLock` of the type its kind names.
    pub const fn fresh(self, fresh: Option<Fresh>) -> Self {
        ObjectHandle { fresh, ..self }
    }

    /// A handle of a primitive whose state the runtime holds entirely (see the module): a
    /// `static` one starts afresh in every execution.
    pub const fn restorable(kind: &'static str) -> Self {
        ObjectHandle {
            restorable: true,
            ..ObjectHandle::new(kind)
        }
    }

    /// A handle whose object starts with the state `init` returns when it registers.
    pub const fn with_state(kind: &'static str, init: fn() -> Box<dyn ObjectState>) -> Self {
        ObjectHandle {
            init: Some(init),
            ..ObjectHandle::new(kind)
        }
    }

    /// The kind name given at creation.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Whether execution `exec` is the first that used the primitive (its facade's values
    /// are that execution's).
    pub(crate) fn first_used_in(&self, exec: u64) -> bool {
        self.exec.load(Ordering::Acquire) == exec
    }

    /// The object's id in execution `exec`, if that execution is the first that used it.
    pub(crate) fn id_in(&self, exec: u64) -> Option<ObjId> {
        self.first_used_in(exec)
            .then(|| self.id.load(Ordering::Acquire))
    }

    /// The object's id in execution `exec`, if it is registered there (first used there, or
    /// a restorable one an earlier execution used); registers nothing.
    pub(crate) fn find(&self, exec: u64, objects: &Objects) -> Option<ObjId> {
        if let Some(id) = self.id_in(exec) {
            return Some(id);
        }
        let addr = std::ptr::from_ref(self).addr();
        let later = &objects.later;
        (self.restorable && self.exec.load(Ordering::Acquire) != 0)
            .then(|| later.binary_search_by_key(&addr, |&(a, _)| a).ok())
            .flatten()
            .map(|i| later[i].1)
    }

    /// The object's id in execution `exec`, registering it there on first use.
    #[inline]
    pub(crate) fn resolve(
        &self,
        exec: u64,
        objects: &mut Objects,
        loc: Loc,
    ) -> Result<ObjId, ForeignObject> {
        // Fast path: already registered here (only this execution's state lock holder
        // stores the id, before any later load of it).
        if self.exec.load(Ordering::Acquire) == exec {
            return Ok(self.id.load(Ordering::Acquire));
        }
        self.resolve_first(exec, objects, loc)
    }

    /// [`resolve`](Self::resolve) where the object is not registered in `exec` yet, or is
    /// another execution's.
    #[cold]
    fn resolve_first(
        &self,
        exec: u64,
        objects: &mut Objects,
        loc: Loc,
    ) -> Result<ObjId, ForeignObject> {
        // Another execution's: read before trying to claim it, so that executions using a
        // `static` at once do not keep taking its cache line from each other.
        let owner = self.exec.load(Ordering::Acquire);
        if owner != 0 {
            return self.later(exec, owner, objects, loc);
        }
        // Two executions may run at once: claim the handle with a compare-exchange so that
        // exactly one registers it and the other sees a foreign object.
        match self
            .exec
            .compare_exchange(0, exec, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                let id = self.register(objects, loc, false);
                self.id.store(id, Ordering::Release);
                Ok(id)
            }
            Err(owner) => self.later(exec, owner, objects, loc),
        }
    }

    /// The id in `exec` of a primitive that execution `owner` registered first.
    fn later(
        &self,
        exec: u64,
        owner: u64,
        objects: &mut Objects,
        loc: Loc,
    ) -> Result<ObjId, ForeignObject> {
        if owner == exec {
            return Ok(self.id.load(Ordering::Acquire));
        }
        if !self.restorable {
            return Err(ForeignObject {
                kind: self.kind,
                fresh: self.fresh,
                owner,
            });
        }
        let addr = std::ptr::from_ref(self).addr();
        match objects.later.binary_search_by_key(&addr, |&(a, _)| a) {
            Ok(i) => Ok(objects.later[i].1),
            Err(i) => {
                let id = self.register(objects, loc, true);
                objects.later.insert(i, (addr, id));
                Ok(id)
            }
        }
    }

    /// Makes execution `exec` the owner of a primitive that execution `owner` first used,
    /// registering it there with fresh scheduling state; `None` if another execution
    /// claimed it meanwhile. For the ambient execution of an OS thread only (see
    /// `ambient.rs`), which takes over what an execution that ended left.
    pub(crate) fn take_over(
        &self,
        exec: u64,
        owner: u64,
        objects: &mut Objects,
        loc: Loc,
    ) -> Option<ObjId> {
        self.exec
            .compare_exchange(owner, exec, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        let id = self.register(objects, loc, false);
        self.id.store(id, Ordering::Release);
        Some(id)
    }

    /// A slot of fresh scheduling state for this primitive in `objects`, whose execution
    /// does not own it (its owner stays): for an operation that must act but cannot be
    /// refused (see `ambient::take_over`).
    pub(crate) fn scratch(&self, objects: &mut Objects, loc: Loc) -> ObjId {
        self.register(objects, loc, false)
    }

    fn register(&self, objects: &mut Objects, loc: Loc, from_earlier: bool) -> ObjId {
        objects.push(ObjectSlot {
            kind: self.kind,
            first_use: loc,
            state: self.init.map(|init| init()),
            from_earlier,
        })
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
