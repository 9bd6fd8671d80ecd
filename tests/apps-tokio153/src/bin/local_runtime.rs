//! tokio 1.53's LocalRuntime (stable since 1.51; there is none in 1.24, so
//! this program is built in tests/apps-tokio153 only): task i yields
//! (i % 5) times, so it is polled exactly (i % 5) + 1 times, as in yields.
//! Tasks are !Send futures (an Rc each) spawned with tokio::task::spawn_local
//! from the block_on future, in spawn order (Tokio ids in that order).
//! Usage: local_runtime [N]
use std::rc::Rc;
use tokio::runtime::LocalOptions;

async fn local_yielder(i: Rc<usize>) -> usize {
    for _ in 0..(*i % 5) {
        tokio::task::yield_now().await;
    }
    *i
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(50);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build_local(LocalOptions::default())
        .expect("runtime");
    let sum: usize = rt.block_on(async {
        let handles: Vec<_> = (0..n).map(|i| tokio::task::spawn_local(local_yielder(Rc::new(i)))).collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.expect("join");
        }
        sum
    });
    println!("local_runtime: spawned {n} tasks, sum {sum}");
}
