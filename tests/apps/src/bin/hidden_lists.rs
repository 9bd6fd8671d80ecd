//! Task lists that no thread's CONTEXT leads to, for dump: a current-thread
//! runtime driven once and then left with C tasks (default 4) parked for
//! good at `dump: c` (no thread is in it afterwards), a runtime built and
//! dropped, and an empty LocalSet kept; main's multi-thread runtime (2
//! workers) has A tasks (default 3) parked at `dump: a`. Tokio has then
//! created 4 task lists (ids 1-4): 2 hold tasks. Prints "ready" once every
//! task has been polled, then sleeps until killed (60 s at most).
//! Usage: hidden_lists [A] [C]
use std::time::Duration;

async fn park_a(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: a
}

async fn park_c(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: c
}

fn main() {
    let a: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let c: u32 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(4);
    drop(tokio::runtime::Builder::new_current_thread().build().unwrap());
    let idle = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let hs: Vec<_> = (0..c).map(|k| idle.spawn(park_c(k))).collect();
    // every task polled once; then no thread is in this runtime
    idle.block_on(async { tokio::time::sleep(Duration::from_millis(100)).await });
    let empty = tokio::task::LocalSet::new();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let ha: Vec<_> = (0..a).map(|k| tokio::spawn(park_a(k))).collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        println!("ready");
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(ha);
    });
    drop((empty, hs, idle));
}
