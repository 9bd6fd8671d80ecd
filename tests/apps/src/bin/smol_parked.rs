//! Tasks parked at known `.await`s on smol 1.3 / async-executor 1.5, for
//! `asyncscope dump`: GLOBAL tasks on smol's global executor (smol::spawn)
//! waiting on a channel receive, USER tasks on a user-created Executor (run
//! by the thread "user-exec") sleeping an hour on a Timer, and LOCAL tasks
//! on a LocalExecutor run by main waiting on the channel below an async fn.
//! Nothing is polled once they are parked. Prints "ready" once all are
//! parked, then waits until killed.
//! Usage: smol_parked [GLOBAL] [USER] [LOCAL] (3, 4, 2).
//! The `// dump:` comments mark the lines the tests expect in the stacks:
//! do not move them apart from their `.await`.
use async_executor::{Executor, LocalExecutor};
use std::time::Duration;

async fn global_wait(rx: async_channel::Receiver<u32>) {
    let got = rx.recv().await; // dump: global_wait
    println!("global got {got:?}");
}

async fn timer_nap() {
    smol::Timer::after(Duration::from_secs(3600)).await; // dump: timer_nap
}

async fn local_inner(rx: async_channel::Receiver<u32>) -> Option<u32> {
    rx.recv().await.ok() // dump: local_inner
}

async fn local_wait(rx: async_channel::Receiver<u32>) {
    let got = local_inner(rx).await; // dump: local_wait
    println!("local got {got:?}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (global, user, local_n) = (arg(1, 3), arg(2, 4), arg(3, 2));
    let (tx, rx) = async_channel::unbounded::<u32>();
    let globals: Vec<_> = (0..global).map(|_| smol::spawn(global_wait(rx.clone()))).collect();
    let ex: &'static Executor<'static> = Box::leak(Box::new(Executor::new()));
    let users: Vec<_> = (0..user).map(|_| ex.spawn(timer_nap())).collect();
    std::thread::Builder::new()
        .name("user-exec".into())
        .spawn(move || smol::block_on(ex.run(std::future::pending::<()>())))
        .unwrap();
    let local = LocalExecutor::new();
    let locals: Vec<_> = (0..local_n).map(|_| local.spawn(local_wait(rx.clone()))).collect();
    smol::block_on(local.run(async {
        smol::Timer::after(Duration::from_millis(200)).await;
        println!("ready");
        std::future::pending::<()>().await
    }));
    drop((tx, globals, users, locals));
}
