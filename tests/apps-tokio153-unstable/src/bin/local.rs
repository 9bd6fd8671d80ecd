//! Known-truth workload on tokio::runtime::LocalRuntime (tokio_unstable):
//! N tasks that are not Send (each holds an Rc) are spawned with
//! tokio::task::spawn_local from inside block_on; task i yields (i % 5)
//! times, so it is polled exactly (i % 5) + 1 times and woken i % 5 times.
//! Usage: local [N]
use std::rc::Rc;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(50);
    let rt = tokio::runtime::LocalRuntime::new().expect("runtime");
    rt.block_on(async move {
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let mine = Rc::new(i);
            handles.push(tokio::task::spawn_local(async move {
                for _ in 0..(*mine % 5) {
                    tokio::task::yield_now().await;
                }
                *mine
            }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.expect("join");
        }
        println!("spawned {} local tasks, sum {}", n, sum);
    });
}
