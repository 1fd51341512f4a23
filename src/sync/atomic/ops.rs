//! The operations of the atomics, as they declare them: the memory model orders each by its
//! `Ordering` ([`Effect::Atomic`]); loads only observe. A primitive layered over this crate
//! passes one to an atomic's `rmw_at` (`AtomicU64::rmw_at`), to record its own caller's
//! place for the operation.

use crate::primitive::{Effect, OpKind, Operation, Role};

/// An atomic access named `name` with `role`.
const fn atomic(name: &'static str, role: Role) -> Operation {
    Operation::new(name).access(role).effect(Effect::Atomic)
}

/// `load`.
pub const LOAD: OpKind = OpKind::new(&atomic("atomic load", Role::Read).observes_only());
/// `store`.
pub const STORE: OpKind = OpKind::new(&atomic("atomic store", Role::Write));
/// `swap`.
pub const SWAP: OpKind = OpKind::new(&atomic("atomic swap", Role::Write));
/// `compare_exchange`.
pub const COMPARE_EXCHANGE: OpKind = OpKind::new(&atomic("atomic compare_exchange", Role::Write));
/// `compare_exchange_weak`.
pub const COMPARE_EXCHANGE_WEAK: OpKind =
    OpKind::new(&atomic("atomic compare_exchange_weak", Role::Write));
/// `fence` (and `compiler_fence`): it accesses no object.
pub const FENCE: OpKind = OpKind::new(
    &Operation::new("fence")
        .effect(Effect::Atomic)
        .observes_only(),
);

/// A read-modify-write of one operand, named after its method.
macro_rules! rmw {
    ($($name:ident $method:literal,)*) => {$(
        #[doc = concat!("`", $method, "`.")]
        pub const $name: OpKind =
            OpKind::new(&atomic(concat!("atomic ", $method), Role::Write));
    )*};
}

rmw! {
    FETCH_ADD "fetch_add",
    FETCH_SUB "fetch_sub",
    FETCH_AND "fetch_and",
    FETCH_NAND "fetch_nand",
    FETCH_OR "fetch_or",
    FETCH_XOR "fetch_xor",
    FETCH_MAX "fetch_max",
    FETCH_MIN "fetch_min",
    FETCH_NOT "fetch_not",
    FETCH_PTR_ADD "fetch_ptr_add",
    FETCH_PTR_SUB "fetch_ptr_sub",
    FETCH_BYTE_ADD "fetch_byte_add",
    FETCH_BYTE_SUB "fetch_byte_sub",
}

/// The operations of one update method (`fetch_update`, `try_update`, `update`): a load,
/// then compare-exchange attempts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Update {
    /// The method's name.
    pub(crate) method: &'static str,
    /// Its first load.
    pub(crate) load: OpKind,
    /// One of its compare-exchange attempts.
    pub(crate) exchange: OpKind,
}

/// The update methods, each named after its method.
macro_rules! update {
    ($($name:ident $method:literal,)*) => {$(
        #[doc = concat!("`", $method, "`.")]
        pub(crate) const $name: Update = Update {
            method: $method,
            load: OpKind::new(
                &atomic(concat!("atomic ", $method, " (load)"), Role::Read).observes_only(),
            ),
            exchange: OpKind::new(&atomic(
                concat!("atomic ", $method, " (compare_exchange)"),
                Role::Write,
            )),
        };
    )*};
}

update! {
    FETCH_UPDATE "fetch_update",
    TRY_UPDATE "try_update",
    UPDATE "update",
}
