//! Where an expansion finds the runtime it calls. Through `interleave_test` itself (the
//! re-exports `interleave_test::interleave`, `interleave_test::tokio::{test, select, ...}`)
//! that is `::interleave_test`, or the `crate` argument of the test attribute. Through the
//! Tokio switch crate `interleave-tokio`, which a user's `Cargo.toml` names `tokio`, it is
//! `::tokio::__interleave`: the user's crate may have no `interleave_test` dependency of its
//! own, and Tokio's macros assume the same of the name `tokio` (a renamed switch takes the
//! `crate` argument, as a renamed Tokio does).
//!
//! The entry points of the switch crate set the root for the length of one expansion; a
//! flag on the expanding thread carries it to the expansion's helpers, which would
//! otherwise all take it as an argument.

use std::cell::Cell;

use proc_macro2::TokenStream;
use quote::quote;

thread_local! {
    /// Whether the expansion under way came through the switch crate.
    static SWITCH: Cell<bool> = const { Cell::new(false) };
}

/// The path of the `interleave_test` crate for the expansion under way.
pub(crate) fn root() -> TokenStream {
    if SWITCH.get() {
        quote!(::tokio::__interleave)
    } else {
        quote!(::interleave_test)
    }
}

/// Runs `expand` with [`root`] naming the switch crate's path; the flag is cleared even if
/// `expand` panics.
pub(crate) fn through_switch<R>(expand: impl FnOnce() -> R) -> R {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            SWITCH.set(false);
        }
    }
    SWITCH.set(true);
    let _clear = Clear;
    expand()
}
