//! Two runtimes in one process, every task parked for good, for `asyncscope
//! dump`: TOKIO tasks on a Tokio multi-thread runtime (2 workers) waiting
//! on a future that never completes, and SMOL tasks on smol's global
//! executor waiting on a channel receive; with `tick`, one more smol task
//! woken every 20 ms (polled while a dump traces). Prints "ready" once all
//! are parked, then waits until killed.
//! Usage: mixed_parked [TOKIO] [SMOL] [tick] (2, 3).
//! The `// dump:` comments mark the lines the tests expect in the stacks:
//! do not move them apart from their `.await`.

async fn tokio_park() {
    std::future::pending::<()>().await; // dump: tokio_park
}

async fn smol_park(rx: async_channel::Receiver<u32>) {
    let got = rx.recv().await; // dump: smol_park
    println!("smol got {got:?}");
}

async fn smol_tick() {
    loop {
        smol::Timer::after(std::time::Duration::from_millis(20)).await; // dump: smol_tick
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n_tokio, n_smol) = (arg(1, 2), arg(2, 3));
    let (tx, rx) = async_channel::unbounded::<u32>();
    let mut smols: Vec<_> = (0..n_smol).map(|_| smol::spawn(smol_park(rx.clone()))).collect();
    if args.get(3).map(String::as_str) == Some("tick") {
        smols.push(smol::spawn(smol_tick()));
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
        .expect("runtime");
    rt.block_on(async {
        let tokios: Vec<_> = (0..n_tokio).map(|_| tokio::spawn(tokio_park())).collect();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        println!("ready");
        std::future::pending::<()>().await;
        drop(tokios);
    });
    drop((tx, smols));
}
