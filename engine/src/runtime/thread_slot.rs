//! The per-thread slot the layers above the engine own: for each model thread, stacks of
//! values of their types (the executors of the thread's nested `block_on`s, the runtime
//! contexts it entered, the local sets whose futures it polls), innermost last.
//!
//! The values may be `!Send` (`Rc`s), so they cannot live in the execution's state, which
//! OS threads share: they are kept on the OS thread that runs the model thread (the driver
//! thread, for coroutines of one execution), keyed by execution and thread. A plain list,
//! searched from its end: a model thread has at most a few entries, and a map lookup (as the
//! crate's `thread_local!` makes, `locals.rs`) would cost more on every `block_on`.
//!
//! Entries of other executions are stale (a thread left behind never returned from its
//! `block_on`): the next push forgets them, as the rest of such a thread is forgotten;
//! they are never dropped outside their model. A value taken off is handed back to the
//! caller, which drops it with no borrow of the list held (its drop may run model code).

use std::any::Any;
use std::cell::RefCell;

use super::Tid;

/// One value of a model thread.
struct Entry {
    exec: u64,
    tid: Tid,
    value: Box<dyn Any>,
}

std::thread_local! {
    static SLOTS: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// Puts `value` on top of model thread `tid`'s stack of `T`s (of execution `exec`); forgets
/// the entries of other executions. Nothing while the OS thread destroys its thread-locals.
pub fn push<T: 'static>((exec, tid): (u64, Tid), value: T) {
    let _ = SLOTS.try_with(|all| {
        let mut all = all.borrow_mut();
        if all.iter().any(|e| e.exec != exec) {
            let (mine, stale): (Vec<_>, Vec<_>) = all.drain(..).partition(|e| e.exec == exec);
            std::mem::forget(stale);
            *all = mine;
        }
        all.push(Entry {
            exec,
            tid,
            value: Box::new(value),
        });
    });
}

/// Takes the top of model thread `tid`'s stack of `T`s off, for the caller to drop.
pub fn pop<T: 'static>((exec, tid): (u64, Tid)) -> Option<T> {
    let taken = SLOTS.try_with(|all| {
        let mut all = all.borrow_mut();
        let at = all
            .iter()
            .rposition(|e| e.exec == exec && e.tid == tid && e.value.is::<T>())?;
        Some(all.remove(at).value)
    });
    let value = taken.ok().flatten()?;
    Some(*value.downcast::<T>().expect("found by its type"))
}

/// `f` of the top of model thread `tid`'s stack of `T`s, if it has one. `f` runs under a
/// borrow of the list: it must not push or pop (it clones what it needs out).
pub fn top<T: 'static, R>((exec, tid): (u64, Tid), f: impl FnOnce(&T) -> R) -> Option<R> {
    SLOTS
        .try_with(|all| {
            let all = all.borrow();
            all.iter()
                .rev()
                .filter(|e| e.exec == exec && e.tid == tid)
                .find_map(|e| e.value.downcast_ref::<T>())
                .map(f)
        })
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn each_type_is_a_stack_of_its_own_per_thread() {
        let (a, b) = ((7, 1), (7, 2));
        push(a, 1u32);
        push(a, "outer");
        push(a, 2u32);
        push(b, 3u32);
        assert_eq!(top(a, |v: &u32| *v), Some(2));
        assert_eq!(top(a, |v: &&str| *v), Some("outer"));
        assert_eq!(top(b, |v: &u32| *v), Some(3));
        assert_eq!(pop::<u32>(a), Some(2));
        assert_eq!(top(a, |v: &u32| *v), Some(1));
        assert_eq!(pop::<u32>(a), Some(1));
        assert_eq!(pop::<u32>(a), None);
        assert_eq!(pop::<&str>(a), Some("outer"));
        assert_eq!(pop::<u32>(b), Some(3));
    }

    #[test]
    fn a_push_of_another_execution_forgets_the_stale_entries_without_dropping_them() {
        let stale = Rc::new(());
        push((8, 0), Rc::clone(&stale));
        push((9, 0), 5u8);
        assert_eq!(top((8, 0), |_: &Rc<()>| ()), None);
        // Forgotten, not dropped: the count stays.
        assert_eq!(Rc::strong_count(&stale), 2);
        assert_eq!(pop::<u8>((9, 0)), Some(5));
    }
}
