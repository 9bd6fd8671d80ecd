//! A LocalSet beside the runtime's own tasks, all quiet, for dump: S tasks
//! (default 3) spawned on the runtime, parked for good at `dump: spawned`,
//! and L tasks (default 5) spawned on a LocalSet (spawn_local), parked at
//! `dump: local`; main drives the LocalSet with LocalSet::block_on. Prints
//! "ready" once every task has been polled, then sleeps until killed (60 s
//! at most). Usage: local_set [S] [L] [multi|current]
use std::time::Duration;

async fn spawned(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: spawned
}

async fn local(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: local
}

fn main() {
    let s: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let l: u32 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let flavor = std::env::args().nth(3).unwrap_or_else(|| "current".into());
    let rt = match flavor.as_str() {
        "multi" => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
        _ => tokio::runtime::Builder::new_current_thread().enable_all().build(),
    }
    .expect("runtime");
    let set = tokio::task::LocalSet::new();
    set.block_on(&rt, async move {
        let hs: Vec<_> = (0..s).map(|k| tokio::spawn(spawned(k))).collect();
        let ls: Vec<_> = (0..l).map(|k| tokio::task::spawn_local(local(k))).collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        println!("ready");
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(hs);
        drop(ls);
    });
}
