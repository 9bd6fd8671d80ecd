//! tokio 1.53's LocalRuntime, quiet, for dump (1.24 has none: built in
//! tests/apps-tokio153 only): L tasks (default 5) spawned with spawn_local,
//! each holding an Rc (so !Send), parked for good at `dump: local`. Prints
//! "ready" once every task has been polled, then sleeps until killed (60 s
//! at most). Usage: local_runtime_idle [L]
use std::rc::Rc;
use std::time::Duration;
use tokio::runtime::LocalOptions;

async fn local(k: Rc<u32>) -> u32 {
    let (_tx, rx) = tokio::sync::oneshot::channel::<u32>();
    std::mem::forget(_tx);
    rx.await.unwrap_or(*k) // dump: local
}

fn main() {
    let l: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build_local(LocalOptions::default())
        .expect("runtime");
    rt.block_on(async move {
        let hs: Vec<_> = (0..l).map(|k| tokio::task::spawn_local(local(Rc::new(k)))).collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        println!("ready");
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(hs);
    });
}
