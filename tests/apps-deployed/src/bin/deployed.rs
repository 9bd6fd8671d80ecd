//! Known truth for every build profile (tests/apps-deployed and
//! tests/apps-deployed153 build it as release with debug = true, debug =
//! false, fat LTO, panic = "abort", opt-level = "s", v0 mangling and
//! split-debuginfo = "packed"; tests/integ/cases/deployed.inc strips it).
//!
//! `deployed yields N [--go-file PATH]`: N tasks on a 2-worker runtime;
//! task i (spawn order, so Tokio's ids in order) yields i % 5 times, so it
//! is polled exactly (i % 5) + 1 times. Even i run the async fn `yielder`,
//! odd i an async block of `main`: two future types, two names. With
//! --go-file the program idles until PATH exists, so a tracer can attach by
//! PID first.
//!
//! `deployed parked`: tasks parked for good at the `.await`s marked
//! `// dump: NAME` (an async fn chain outer -> middle -> inner on a
//! pending future, a receiver on an mpsc channel, a sleeper on an hour's
//! sleep); prints "ready" once all are parked, then sleeps until killed
//! (60 s at most). Do not move a marker away from its `.await`.
use std::time::Duration;
use tokio::sync::mpsc;

async fn yielder(i: usize) -> usize {
    for _ in 0..(i % 5) {
        tokio::task::yield_now().await;
    }
    i
}

async fn outer() {
    middle().await; // dump: outer
}

async fn middle() {
    inner(3).await; // dump: middle
}

async fn inner(n: u32) {
    let _keep = n;
    std::future::pending::<()>().await; // dump: inner
}

async fn receiver(mut rx: mpsc::Receiver<u32>) {
    while let Some(v) = rx.recv().await { // dump: receiver
        println!("got {v}");
    }
}

async fn sleeper() {
    tokio::time::sleep(Duration::from_secs(3600)).await; // dump: sleeper
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("yields").to_string();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let go_file = args.iter().position(|a| a == "--go-file").and_then(|i| args.get(i + 1)).cloned();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        if mode == "parked" {
            let (tx, rx) = mpsc::channel::<u32>(4);
            let _outer = tokio::spawn(outer());
            let _receiver = tokio::spawn(receiver(rx));
            let _sleeper = tokio::spawn(sleeper());
            tokio::time::sleep(Duration::from_millis(200)).await;
            println!("ready");
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tx);
            return;
        }
        if let Some(path) = go_file {
            println!("waiting for {}", path);
            while !std::path::Path::new(&path).exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            if i % 2 == 0 {
                handles.push(tokio::spawn(yielder(i)));
            } else {
                handles.push(tokio::spawn(async move {
                    for _ in 0..(i % 5) {
                        tokio::task::yield_now().await;
                    }
                    i
                }));
            }
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.expect("join");
        }
        println!("spawned {} tasks, sum {}", n, sum);
    });
}
