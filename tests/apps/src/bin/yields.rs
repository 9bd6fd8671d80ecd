//! Known-truth workload: task i yields (i % 5) times, so it is polled exactly
//! (i % 5) + 1 times. Usage: yields [multi|current] [N] [--go-file PATH]
//! With --go-file the program idles (one timer poll every 10 ms in main) until
//! PATH exists, so a tracer can attach by PID before any task is spawned.
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flavor = args.get(1).map(String::as_str).unwrap_or("multi").to_string();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let go_file = args.iter().position(|a| a == "--go-file").and_then(|i| args.get(i + 1)).cloned();

    let rt = match flavor.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
    }
    .expect("runtime");

    rt.block_on(async move {
        if let Some(path) = go_file {
            println!("waiting for {}", path);
            while !std::path::Path::new(&path).exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            handles.push(tokio::spawn(async move {
                for _ in 0..(i % 5) {
                    tokio::task::yield_now().await;
                }
                i
            }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.expect("join");
        }
        println!("spawned {} tasks, sum {}", n, sum);
    });
}
