use interleave_test::sync::{Arc, Mutex};
use interleave_test::{thread, Builder};

#[test]
fn smoke() {
    let model = || {
        let m = Arc::new(Mutex::new(0));
        let hs: Vec<_> = (0..2).map(|_| { let m = m.clone(); thread::spawn(move || { let v = *m.lock().unwrap(); *m.lock().unwrap() = v + 1; }) }).collect();
        for h in hs { h.join().unwrap(); }
        assert_eq!(*m.lock().unwrap(), 2);
    };
    let f = Builder::new().seed(3).iterations(1000).check(model).unwrap_err();
    println!("{f}");
    let s = interleave_test::Schedule::from_json(&f.schedule().to_json()).unwrap();
    let f2 = Builder::new().replay(model, &s).unwrap_err();
    assert_eq!(f, f2);
    let abba = || {
        let a = Arc::new(Mutex::new(0)); let b = Arc::new(Mutex::new(0));
        let (a2, b2) = (a.clone(), b.clone());
        let t = thread::Builder::new().name("t1".into()).spawn(move || { let _x = a2.lock().unwrap(); let _y = b2.lock().unwrap(); }).unwrap();
        { let _y = b.lock().unwrap(); let _x = a.lock().unwrap(); }
        t.join().unwrap();
    };
    let f = Builder::new().seed(3).iterations(1000).check(abba).unwrap_err();
    println!("{f}");
    let ok = Builder::new().seed(3).iterations(10000).check(|| {
        let m = Arc::new(Mutex::new(0));
        let hs: Vec<_> = (0..2).map(|_| { let m = m.clone(); thread::spawn(move || { *m.lock().unwrap() += 1; }) }).collect();
        for h in hs { h.join().unwrap(); }
        assert_eq!(*m.lock().unwrap(), 2);
    }).unwrap();
    println!("{ok}");
}
