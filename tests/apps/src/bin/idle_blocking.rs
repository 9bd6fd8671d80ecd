//! All tasks idle while the blocking pool runs, for dump: N tasks (default
//! 5) parked for good at the .await marked below; the block_on future keeps
//! the blocking pool busy (a spawn_blocking of 20 ms, again and again), so
//! the only tasks polled are blocking-pool tasks, in no task list. Prints
//! "ready" once every task has been polled, then runs until killed (60 s
//! at most). Usage: idle_blocking [N] [multi|current]
use std::time::{Duration, Instant};

async fn parked(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: parked
}

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let flavor = std::env::args().nth(2).unwrap_or_else(|| "multi".into());
    let rt = match flavor.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
    }
    .expect("runtime");
    rt.block_on(async move {
        let handles: Vec<_> = (0..n).map(|k| tokio::spawn(parked(k))).collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        println!("ready");
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(20)))
                .await
                .unwrap();
        }
        drop(handles);
    });
}
