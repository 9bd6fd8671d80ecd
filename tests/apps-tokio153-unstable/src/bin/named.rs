//! Known-truth workload for task::Builder names (tokio_unstable): the i-th
//! task is spawned with `Builder::new().name("job-NNN")` (i in three digits)
//! and yields (i % 4) times, so it is polled exactly (i % 4) + 1 times; every
//! fourth task, from the third on (i % 4 == 2), is spawned unnamed with
//! `Builder::new().spawn`. Usage: named [multi|current] [N]
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flavor = args.get(1).map(String::as_str).unwrap_or("multi").to_string();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(40);

    let rt = match flavor.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
    }
    .expect("runtime");

    rt.block_on(async move {
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let work = async move {
                for _ in 0..(i % 4) {
                    tokio::task::yield_now().await;
                }
                i
            };
            let name = format!("job-{:03}", i);
            let builder = tokio::task::Builder::new();
            let builder = if i % 4 == 2 { builder } else { builder.name(&name) };
            handles.push(builder.spawn(work).expect("spawn"));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.expect("join");
        }
        // a last, named timer task: one sleep, so polled twice
        let t = tokio::task::Builder::new()
            .name("sleeper")
            .spawn(tokio::time::sleep(Duration::from_millis(5)))
            .expect("spawn");
        t.await.expect("join");
        println!("spawned {} named tasks, sum {}", n, sum);
    });
}
