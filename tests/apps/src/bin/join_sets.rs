//! A JoinSet's children under their parent, for dump: a parent task spawns
//! N children (default 3) into a JoinSet and awaits them at the .await
//! marked `dump: parent`; each child is parked for good at `dump: child`.
//! A second parent holds a JoinSet of M children (default 2) parked the
//! same way and one that is done at once (its output never joined) while
//! it awaits something else (`dump: holder`). Prints "ready" once every task
//! has been polled, then sleeps until killed (60 s at most).
//! Usage: join_sets [N] [M]
use std::time::Duration;
use tokio::task::JoinSet;

async fn child(k: u32) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(k) // dump: child
}

async fn parent(n: u32) -> u32 {
    let mut set = JoinSet::new();
    for k in 0..n {
        set.spawn(child(k));
    }
    let mut sum = 0;
    while let Some(r) = set.join_next().await { // dump: parent
        sum += r.unwrap_or(0);
    }
    sum
}

async fn holder(m: u32) -> usize {
    let mut set = JoinSet::new();
    for k in 0..m {
        set.spawn(child(100 + k));
    }
    set.spawn(async { 7 });
    tokio::time::sleep(Duration::from_secs(3600)).await; // dump: holder
    set.len()
}

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let m: u32 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let p = tokio::spawn(parent(n));
        let h = tokio::spawn(holder(m));
        tokio::time::sleep(Duration::from_millis(100)).await;
        println!("ready");
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop((p, h));
    });
}
