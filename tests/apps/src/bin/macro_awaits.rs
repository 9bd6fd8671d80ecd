//! Tasks parked inside the await macros and boxed futures, for
//! `asyncscope dump`: a tokio::select! over a channel receive and an hour's
//! sleep, a tokio::join! and a tokio::try_join! of a sleep and a pending
//! future, a tokio::join! whose first branch is done, a futures::join! of
//! two such, and a Pin<Box<dyn Future>> awaited
//! with the future inside it parked two async fns down, and an async fn
//! behind combinators (a tokio timeout of a futures map of a fuse). One more task keeps
//! a worker polled (a busy yield loop) so that a short recording sees a task.
//! Prints "ready" once all are parked, then runs until killed. The `// dump:`
//! comments mark the lines the stacks must show: keep them on their macro's
//! or .await's line.
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::sync::mpsc;

async fn hour() {
    tokio::time::sleep(Duration::from_secs(3600)).await; // dump: hour
}

async fn never() {
    std::future::pending::<()>().await; // dump: never
}

async fn in_select(mut rx: mpsc::Receiver<u32>) {
    tokio::select! { // dump: select
        v = rx.recv() => println!("got {v:?}"),
        _ = hour() => {}
    }
}

async fn in_tokio_join() {
    tokio::join!(hour(), never()); // dump: tokio_join
}

async fn in_join_done() {
    tokio::join!(async { 7 }, never()); // dump: join_done
}

async fn in_try_join() {
    let r: Result<((), ()), ()> = tokio::try_join!(async { hour().await; Ok(()) }, async { never().await; Ok(()) }); // dump: try_join
    let _ = r;
}

async fn in_futures_join() {
    futures::join!(hour(), never()); // dump: futures_join
}

async fn boxed_inner() {
    never().await; // dump: boxed_inner
}

async fn in_boxed() {
    let f: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(boxed_inner());
    f.await; // dump: boxed
}

async fn in_combinators() {
    use futures::FutureExt;
    let f = tokio::time::timeout(Duration::from_secs(3600), never().map(|_| 1).fuse());
    let _ = f.await; // dump: combinators
}

async fn in_unordered() {
    use futures::StreamExt;
    let mut futs = futures::stream::FuturesUnordered::new();
    futs.push(Box::pin(hour()) as Pin<Box<dyn Future<Output = ()> + Send>>);
    futs.push(Box::pin(never()));
    futs.push(Box::pin(never()));
    futs.next().await; // dump: unordered
}

async fn in_joinset() {
    let mut set = tokio::task::JoinSet::new();
    set.spawn(hour());
    set.spawn(never());
    set.join_next().await; // dump: joinset
}

async fn busy() {
    loop {
        std::thread::sleep(Duration::from_millis(5));
        tokio::task::yield_now().await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (_tx, rx) = mpsc::channel::<u32>(1);
    tokio::spawn(in_select(rx));
    tokio::spawn(in_tokio_join());
    tokio::spawn(in_join_done());
    tokio::spawn(in_try_join());
    tokio::spawn(in_futures_join());
    tokio::spawn(in_boxed());
    tokio::spawn(in_combinators());
    tokio::spawn(in_unordered());
    tokio::spawn(in_joinset());
    tokio::spawn(busy());
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!("ready");
    never().await;
}
