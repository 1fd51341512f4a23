//! The memory model on its own, driven by hand.

use std::sync::atomic::Ordering::{self, *};

use super::Memory;
use crate::hb::Key;
use crate::op::Role;

/// Memory with threads 0 (the spawner), 1 and 2, and atomics 0 and 1 holding 0.
fn three_threads() -> Memory {
    let mut m = Memory::default();
    m.reset(true);
    m.spawned(0, 1);
    m.spawned(0, 2);
    m.atomic_touch(0, || 0);
    m.atomic_touch(1, || 0);
    m
}

fn store(m: &mut Memory, obj: usize, t: usize, bits: u64, order: Ordering) {
    m.atomic_begin(t, order);
    let mut slots = Vec::new();
    m.store_slots(obj, t, order, &mut slots);
    m.store(obj, t, slots[0], bits, order);
}

/// The values thread `t` may load from `obj`, newest first.
fn may_read(m: &Memory, obj: usize, t: usize) -> Vec<u64> {
    let mut idx = Vec::new();
    m.readable(obj, t, Relaxed, &mut idx);
    idx.iter()
        .map(|&i| m.atomics[obj].as_ref().unwrap().stores[i].bits)
        .collect()
}

fn load_newest(m: &mut Memory, obj: usize, t: usize, order: Ordering) -> u64 {
    m.atomic_begin(t, order);
    let mut idx = Vec::new();
    m.readable(obj, t, order, &mut idx);
    m.load(obj, t, idx[0], order)
}

#[test]
fn relaxed_message_passing_may_read_the_stale_payload() {
    let mut m = three_threads();
    store(&mut m, 0, 1, 42, Relaxed); // data
    store(&mut m, 1, 1, 1, Relaxed); // flag
    assert_eq!(load_newest(&mut m, 1, 2, Relaxed), 1);
    assert_eq!(may_read(&m, 0, 2), vec![42, 0]);
}

#[test]
fn release_acquire_message_passing_reads_only_the_payload() {
    let mut m = three_threads();
    store(&mut m, 0, 1, 42, Relaxed);
    store(&mut m, 1, 1, 1, Release);
    assert_eq!(load_newest(&mut m, 1, 2, Acquire), 1);
    assert_eq!(may_read(&m, 0, 2), vec![42]);
}

#[test]
fn fences_turn_relaxed_accesses_into_message_passing() {
    let mut m = three_threads();
    store(&mut m, 0, 1, 42, Relaxed);
    m.fence(1, Release);
    store(&mut m, 1, 1, 1, Relaxed);
    assert_eq!(load_newest(&mut m, 1, 2, Relaxed), 1);
    assert_eq!(may_read(&m, 0, 2), vec![42, 0], "no acquire fence yet");
    m.fence(2, Acquire);
    assert_eq!(may_read(&m, 0, 2), vec![42]);
}

#[test]
fn reading_a_store_forbids_older_ones_afterwards() {
    let mut m = three_threads();
    store(&mut m, 0, 1, 1, Relaxed);
    store(&mut m, 0, 1, 2, Relaxed);
    assert_eq!(may_read(&m, 0, 2), vec![2, 1, 0]);
    m.atomic_begin(2, Relaxed);
    m.load(0, 2, 1, Relaxed); // reads 1
    assert_eq!(may_read(&m, 0, 2), vec![2, 1]);
    let mut slots = Vec::new();
    m.store_slots(0, 2, Relaxed, &mut slots);
    assert_eq!(slots, vec![3, 2], "after 2, or between 1 and 2");
}

#[test]
fn seq_cst_loads_and_fences_know_every_earlier_seq_cst_store() {
    let mut m = three_threads();
    store(&mut m, 0, 1, 1, SeqCst);
    assert_eq!(may_read(&m, 0, 2), vec![1, 0], "a relaxed load");
    let mut idx = Vec::new();
    m.readable(0, 2, SeqCst, &mut idx);
    assert_eq!(idx, vec![1], "a SeqCst load");
    m.fence(2, SeqCst);
    assert_eq!(
        may_read(&m, 0, 2),
        vec![1],
        "a relaxed load after a SeqCst fence"
    );
}

#[test]
fn a_mutex_orders_plain_accesses_and_nothing_else_does() {
    let mut m = three_threads();
    assert!(
        m.cell_access(5, 1, true, std::panic::Location::caller())
            .is_ok()
    );
    m.access(1, Key::Obj(3), Role::Release); // unlock
    let loc = std::panic::Location::caller();
    let race = m.cell_access(5, 2, false, loc).unwrap_err();
    assert_eq!(
        (race.earlier.tid, race.earlier.write, race.later.tid),
        (1, true, 2)
    );
    m.access(2, Key::Obj(3), Role::Acquire); // lock
    assert!(m.cell_access(5, 2, false, loc).is_ok());
    assert!(m.cell_access(5, 2, true, loc).is_ok());
}

#[test]
fn old_stores_are_dropped_once_no_thread_can_read_them() {
    let mut m = three_threads();
    m.finished(1);
    m.finished(2);
    for v in 1..=6 {
        store(&mut m, 0, 0, v, Relaxed);
    }
    assert_eq!(may_read(&m, 0, 0), vec![6]);
    assert!(m.atomics[0].as_ref().unwrap().stores.len() < super::atomic::PRUNE_FROM);
}

#[test]
fn two_readers_of_an_rwlock_stay_unordered() {
    let mut m = three_threads();
    let loc = std::panic::Location::caller();
    let lock = Key::Obj(3);
    m.access(1, lock, Role::ReadAcquire);
    assert!(m.cell_access(5, 1, true, loc).is_ok()); // a write under a read lock
    m.access(1, lock, Role::ReadRelease);
    m.access(2, lock, Role::ReadAcquire);
    assert!(m.cell_access(5, 2, false, loc).is_err());
    m.access(2, lock, Role::ReadRelease);
    m.access(0, lock, Role::Acquire); // a writer sees both readers
    assert!(m.cell_access(5, 0, true, loc).is_ok());
}
