//! Executions reuse OS threads: 100,000 executions of a 3-thread model leave no OS thread
//! behind and keep memory flat. (Its own test binary, so no other test's threads count.)

use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, thread};

fn status(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let line = status.lines().find(|l| l.starts_with(field)).expect(field);
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn three_threads() {
    let m = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || *m.lock().unwrap() += 1)
        })
        .collect();
    *m.lock().unwrap() += 1;
    for h in hs {
        h.join().unwrap();
    }
}

#[test]
#[cfg(target_os = "linux")]
fn one_hundred_thousand_executions_leave_no_thread_behind_and_memory_flat() {
    let threads_before = status("Threads:");
    let parallelism = Builder::new().parallelism as u64;
    Builder::new()
        .seed(1)
        .iterations(10_000)
        .check(three_threads)
        .unwrap();
    let rss_warm = status("VmRSS:");
    let threads_warm = status("Threads:");
    Builder::new()
        .seed(2)
        .iterations(90_000)
        .check(three_threads)
        .unwrap();
    let rss_after = status("VmRSS:");
    let threads_after = status("Threads:");
    // The pool holds at most the two spawned threads' workers of each execution running at
    // once, plus one that may still be on its way back; it does not grow with the number of
    // executions. (A parallel run's driver threads exit with the run.)
    let bound = threads_before + 2 * parallelism + 1;
    assert!(
        threads_warm <= bound,
        "{threads_before} -> {threads_warm} with parallelism {parallelism}"
    );
    // Nine times more executions stay within the same bound (when a run happens to overlap
    // more executions than the first, the pool may reach it only now).
    assert!(
        threads_after <= bound,
        "{threads_warm} -> {threads_after} with parallelism {parallelism}"
    );
    // 90,000 more executions add less than 2 MiB of resident memory.
    assert!(
        rss_after < rss_warm + 2048,
        "RSS {rss_warm} KiB -> {rss_after} KiB"
    );
    // Idle workers leave after a while.
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(status("Threads:"), threads_before, "idle workers exit");
}
