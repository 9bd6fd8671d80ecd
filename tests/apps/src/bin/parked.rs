//! Tasks parked at known `.await`s, for `asyncscope dump`: one stuck on
//! `std::future::pending()` two async fns below its root, two waiting on an
//! mpsc receive (one spawned as an async fn, one as an async block), one
//! sleeping an hour, and one that keeps its worker busy (blocking sleeps
//! between yields, so it is nearly always running). Prints "ready" once all are parked, then a heartbeat line
//! every 100 ms from a task, until killed. `parked quiet`: the same parked
//! tasks without the busy and heartbeat ones, so nothing is ever polled. The `// dump:` comments mark the
//! lines tests/integ/dump.sh expects in the stacks: do not move them apart
//! from their `.await`.
use std::time::Duration;
use tokio::sync::mpsc;

async fn deep_outer() {
    deep_middle().await; // dump: deep_outer
}

async fn deep_middle() {
    deep_inner(7).await; // dump: deep_middle
}

async fn deep_inner(n: u32) {
    let _keep = n;
    std::future::pending::<()>().await; // dump: deep_inner
}

async fn consume(mut rx: mpsc::Receiver<u32>) {
    while let Some(v) = rx.recv().await { // dump: consume
        println!("got {v}");
    }
}

async fn busy() {
    loop {
        std::thread::sleep(Duration::from_millis(20));
        tokio::task::yield_now().await; // dump: busy
    }
}

async fn nap() {
    tokio::time::sleep(Duration::from_secs(3600)).await; // dump: nap
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (tx1, rx1) = mpsc::channel::<u32>(4);
    let (tx2, mut rx2) = mpsc::channel::<u32>(4);
    let _deep = tokio::spawn(deep_outer());
    let _consumer = tokio::spawn(consume(rx1));
    let _block_consumer = tokio::spawn(async move {
        let got = rx2.recv().await; // dump: block_consumer
        println!("block consumer got {got:?}");
    });
    let _nap = tokio::spawn(nap());
    if std::env::args().nth(1).as_deref() == Some("quiet") {
        tokio::time::sleep(Duration::from_millis(200)).await;
        println!("ready");
        std::future::pending::<()>().await;
    }
    let _busy = tokio::spawn(busy());
    let heartbeat = tokio::spawn(async {
        let mut n = 0u64;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await; // dump: heartbeat
            n += 1;
            println!("heartbeat {n}");
        }
    });
    // every task has been polled once (and parked) well before this
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!("ready");
    heartbeat.await.unwrap();
    drop((tx1, tx2));
}
