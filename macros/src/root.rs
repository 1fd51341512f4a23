//! Where an expansion finds the crates it calls: `interleave_test` (the test attribute's
//! runtime: `__private::run_test`, `block_on_test`, ...) and `interleave_test_tokio` (what
//! `select!`, `join!` and `try_join!` call: its `__private`). Which paths depend on the
//! entry point the user named:
//! - `interleave_test::interleave` (`#[interleave]`): `::interleave_test`, or the `crate`
//!   argument of the attribute.
//! - the entries `interleave_test_tokio` re-exports (`#[tokio::test]`, `#[tokio::main]`,
//!   `select!`, `join!`, `try_join!`): `::interleave_test_tokio`, and `interleave_test`
//!   through it (`::interleave_test_tokio::__interleave`), so a crate that names only the
//!   Tokio crate needs no `interleave_test` dependency.
//! - the switch crate `interleave-tokio`'s entries, which a user's `Cargo.toml` names
//!   `tokio`: `::tokio` (which re-exports the Tokio crate's items) and
//!   `::tokio::__interleave`. Tokio's macros assume the name `tokio` the same way (a
//!   renamed switch takes the `crate` argument, as a renamed Tokio does).
//!
//! An entry point sets its paths for the length of one expansion; a flag on the expanding
//! thread carries them to the expansion's helpers, which would otherwise all take them as an
//! argument.

use std::cell::Cell;

use proc_macro2::TokenStream;
use quote::quote;

/// Which entry point the expansion under way came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// `interleave_test`'s own (`#[interleave]`).
    Facade,
    /// `interleave_test_tokio`'s.
    Tokio,
    /// The switch crate's, named `tokio`.
    Switch,
}

thread_local! {
    /// The entry point of the expansion under way.
    static ENTRY: Cell<Entry> = const { Cell::new(Entry::Facade) };
}

/// The path of the `interleave_test` crate for the expansion under way.
pub(crate) fn root() -> TokenStream {
    match ENTRY.get() {
        Entry::Facade => quote!(::interleave_test),
        Entry::Tokio => quote!(::interleave_test_tokio::__interleave),
        Entry::Switch => quote!(::tokio::__interleave),
    }
}

/// The path of the `interleave_test_tokio` crate for the expansion under way.
pub(crate) fn tokio_root() -> TokenStream {
    match ENTRY.get() {
        Entry::Facade | Entry::Tokio => quote!(::interleave_test_tokio),
        Entry::Switch => quote!(::tokio),
    }
}

/// Runs `expand` with [`root`] and [`tokio_root`] naming the paths of `entry`; the flag is
/// put back even if `expand` panics.
pub(crate) fn through<R>(entry: Entry, expand: impl FnOnce() -> R) -> R {
    struct Restore(Entry);
    impl Drop for Restore {
        fn drop(&mut self) {
            ENTRY.set(self.0);
        }
    }
    let _restore = Restore(ENTRY.replace(entry));
    expand()
}
