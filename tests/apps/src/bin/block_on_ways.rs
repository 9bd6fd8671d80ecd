//! block_on futures parked at known lines, for `asyncscope dump`: main's
//! async body (#[tokio::main]-style: a runtime's block_on on the main
//! thread; `block_on_ways multi` (default) a multi-thread runtime, parked
//! in CachedParkThread::block_on, `block_on_ways current` a current-thread
//! one, parked in CoreGuard::block_on), two async fns below it awaiting a
//! oneshot never sent; a thread "side-rt" running its own current-thread
//! Runtime::block_on, parked one async fn below its root; and a thread
//! "handle-bo" in Handle::block_on of main's runtime, parked on a oneshot
//! at its root; and a thread "recv-bo" in Handle::block_on of a oneshot
//! receiver itself (a future that is no async state machine). One spawned
//! task parked too. Prints "ready" once all are
//! parked, then sleeps until killed (60 s at most: the main future is
//! woken by nothing). The `// dump:` comments mark the lines the dump
//! cases expect: do not move them apart from their `.await`.
use std::time::Duration;
use tokio::sync::oneshot;

async fn main_inner(rx: oneshot::Receiver<u32>) -> u32 {
    rx.await.unwrap_or(1) // dump: main_inner
}

async fn main_outer(rx: oneshot::Receiver<u32>) -> u32 {
    main_inner(rx).await + 1 // dump: main_outer
}

async fn side_inner(rx: oneshot::Receiver<u32>) -> u32 {
    rx.await.unwrap_or(2) // dump: side_inner
}

async fn spawned(rx: oneshot::Receiver<u32>) -> u32 {
    rx.await.unwrap_or(3) // dump: spawned
}

fn main() {
    let current = std::env::args().nth(1).as_deref() == Some("current");
    let rt = if current {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    };
    let (main_tx, main_rx) = oneshot::channel::<u32>();
    let (side_tx, side_rx) = oneshot::channel::<u32>();
    let (handle_tx, handle_rx) = oneshot::channel::<u32>();
    let (task_tx, task_rx) = oneshot::channel::<u32>();
    let (recv_tx, recv_rx) = oneshot::channel::<u32>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let ready2 = ready_tx.clone();
    let ready3 = ready_tx.clone();
    std::thread::Builder::new()
        .name("side-rt".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let v = rt.block_on(async move {
                ready_tx.send(()).unwrap();
                side_inner(side_rx).await // dump: side_outer
            });
            println!("side {v}");
        })
        .unwrap();
    let handle = rt.handle().clone();
    std::thread::Builder::new()
        .name("handle-bo".into())
        .spawn(move || {
            let v = handle.block_on(async move {
                ready2.send(()).unwrap();
                handle_rx.await.unwrap_or(4) // dump: handle
            });
            println!("handle {v}");
        })
        .unwrap();
    let handle = rt.handle().clone();
    std::thread::Builder::new()
        .name("recv-bo".into())
        .spawn(move || {
            ready3.send(()).unwrap();
            let v = handle.block_on(recv_rx);
            println!("recv {v:?}");
        })
        .unwrap();
    let v = rt.block_on(async move {
        let _t = tokio::spawn(spawned(task_rx));
        for _ in 0..3 {
            ready_rx.recv().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        println!("ready");
        let limit = Duration::from_secs(60);
        tokio::time::timeout(limit, main_outer(main_rx)).await.unwrap_or(0) // dump: main
    });
    drop((main_tx, side_tx, handle_tx, task_tx, recv_tx));
    println!("main {v}");
}
