//! Two runtimes, both quiet, for dump: a multi-thread runtime (2 workers)
//! driven by main's block_on with A tasks (default 5) parked for good at
//! the .await marked `dump: a`, and a current-thread runtime driven by a
//! thread of its own with B tasks (default 5) parked at `dump: b`. Prints
//! "ready" once every task has been polled, then sleeps until killed
//! (60 s at most). Usage: two_runtimes [A] [B]
use std::time::Duration;

async fn park_a(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: a
}

async fn park_b(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: b
}

fn main() {
    let a: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let b: u32 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let second = std::thread::Builder::new()
        .name("second-rt".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let hs: Vec<_> = (0..b).map(|k| tokio::spawn(park_b(k))).collect();
                tokio::time::sleep(Duration::from_millis(100)).await;
                tx.send(()).unwrap();
                tokio::time::sleep(Duration::from_secs(60)).await;
                drop(hs);
            });
        })
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let hs: Vec<_> = (0..a).map(|k| tokio::spawn(park_a(k))).collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        rx.recv().unwrap();
        println!("ready");
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(hs);
    });
    second.join().unwrap();
}
