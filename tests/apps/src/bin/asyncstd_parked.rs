//! Tasks parked at known `.await`s on async-std 1.12 (its tasks run by
//! async-global-executor's GLOBAL_EXECUTOR, an async-executor 1.5 Executor),
//! for `asyncscope dump`: WAITERS tasks waiting on a channel receive two
//! async fns below their root, NAPPERS tasks sleeping an hour, and with
//! `busy` one task that keeps a worker busy (blocking sleeps between
//! yields, so it is nearly always running); without it nothing is polled
//! once they are parked. Prints "ready" once all are parked, then waits
//! until killed. Usage: asyncstd_parked [WAITERS] [NAPPERS] [busy] (3, 2).
//! The `// dump:` comments mark the lines the tests expect in the stacks:
//! do not move them apart from their `.await`.
use async_std::channel;
use std::time::Duration;

async fn inner_wait(rx: channel::Receiver<u32>) -> Option<u32> {
    rx.recv().await.ok() // dump: inner_wait
}

async fn waiter(rx: channel::Receiver<u32>) {
    let got = inner_wait(rx).await; // dump: waiter
    println!("waiter got {got:?}");
}

async fn napper() {
    async_std::task::sleep(Duration::from_secs(3600)).await; // dump: napper
}

async fn busy() {
    loop {
        std::thread::sleep(Duration::from_millis(20));
        async_std::task::yield_now().await; // dump: busy
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let waiters: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let nappers: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let with_busy = args.get(3).map(String::as_str) == Some("busy");
    async_std::task::block_on(async move {
        let (tx, rx) = channel::unbounded::<u32>();
        let mut handles = Vec::new();
        for _ in 0..waiters {
            handles.push(async_std::task::spawn(waiter(rx.clone())));
        }
        for _ in 0..nappers {
            handles.push(async_std::task::spawn(napper()));
        }
        if with_busy {
            handles.push(async_std::task::spawn(busy()));
        }
        async_std::task::sleep(Duration::from_millis(200)).await;
        println!("ready");
        std::future::pending::<()>().await;
        drop((tx, handles));
    });
}
