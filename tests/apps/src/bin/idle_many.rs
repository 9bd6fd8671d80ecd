//! Many idle tasks for dump: N tasks (default 25) each parked for good in
//! idle(), at the .await marked below, spread over every shard of Tokio's
//! task list (1.35 and later). Prints "ready" once every task has been
//! polled, then sleeps until killed (60 s at most).
//! Usage: idle_many [N] [multi|current]
use std::time::Duration;

async fn idle(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: idle
}

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(25);
    let flavor = std::env::args().nth(2).unwrap_or_else(|| "multi".into());
    let rt = match flavor.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
    }
    .expect("runtime");
    rt.block_on(async move {
        let handles: Vec<_> = (0..n).map(|k| tokio::spawn(idle(k))).collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        println!("ready");
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(handles);
    });
}
