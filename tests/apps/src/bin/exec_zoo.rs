//! Tasks parked in many ways on async-std 1.12 or smol 1.3 (async-executor
//! 1.5 underneath), for `asyncscope dump` (tests/integ/checks/
//! dump_zoo_check.py holds the truth): nested async fns, a channel receive,
//! a timer, futures::{join!, select!}, futures::future::{select,
//! join_all}, FuturesUnordered, a Pin<Box<dyn Future>>, the combinators
//! map, fuse and then, a timeout, and a task awaiting a blocking call.
//!
//! Usage: exec_zoo asyncstd|smol [load]
//!   asyncstd: the tasks spawned with async_std::task::spawn (async-global-
//!             executor's GLOBAL_EXECUTOR; spawn_local needs async-std's
//!             unstable feature)
//!   smol:     the tasks spawned with smol::spawn (smol's GLOBAL), two more
//!             on a LocalExecutor run by main, two on a user Executor run
//!             by the thread "user-exec"
//!   load:     two ping-pong pairs keep the executor busy
//! Prints "ready" once every task is parked, then runs until killed (120 s
//! at most). The `// dump: TAG` comments mark the lines the stacks must
//! show: keep each on its .await's (or its macro's) line.
use futures::{FutureExt, StreamExt};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

fn smol_mode() -> bool {
    std::env::args().nth(1).as_deref() == Some("smol")
}

async fn nap() {
    if smol_mode() {
        smol::Timer::after(HOUR).await; // dump: nap_smol
    } else {
        async_std::task::sleep(HOUR).await; // dump: nap_std
    }
}

async fn never() {
    std::future::pending::<()>().await; // dump: never
}

async fn x_nest_a() {
    x_nest_b().await; // dump: x_nest_a
}

async fn x_nest_b() {
    nap().await; // dump: x_nest_b
}

async fn x_recv(rx: async_channel::Receiver<u32>) {
    let _ = rx.recv().await; // dump: x_recv
}

async fn x_join() {
    futures::join!(nap(), never()); // dump: x_join
}

async fn x_select(rx: async_channel::Receiver<u32>) {
    futures::select! { // dump: x_select
        v = rx.recv().fuse() => println!("{v:?}"),
        _ = nap().fuse() => {},
    }
}

async fn x_fn_select() {
    let _ = futures::future::select(Box::pin(nap()), Box::pin(never())).await; // dump: x_fn_select
}

async fn x_join_all() {
    futures::future::join_all(vec![never(), never()]).await; // dump: x_join_all
}

async fn x_unordered() {
    let mut fu = futures::stream::FuturesUnordered::new();
    fu.push(never());
    fu.push(never());
    fu.next().await; // dump: x_unordered
}

async fn x_boxed() {
    let f: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(x_nest_b());
    f.await; // dump: x_boxed
}

async fn x_combinators() {
    never().fuse().map(|_| 1).then(|_| async {}).await; // dump: x_combinators
}

async fn x_timeout() {
    let _ = async_std::future::timeout(HOUR, never()).await; // dump: x_timeout
}

async fn x_blocking() {
    if smol_mode() {
        smol::unblock(|| std::thread::sleep(HOUR)).await; // dump: x_blocking_smol
    } else {
        async_std::task::spawn_blocking(|| std::thread::sleep(HOUR)).await; // dump: x_blocking_std
    }
}

async fn x_local(v: std::rc::Rc<u32>) {
    never().await; // dump: x_local
    println!("{v}");
}

async fn x_user() {
    nap().await; // dump: x_user
}

async fn x_ping(rx: async_channel::Receiver<u64>, tx: async_channel::Sender<u64>) {
    while let Ok(v) = rx.recv().await { // dump: x_ping
        if tx.send(v + 1).await.is_err() { // dump: x_ping_send
            return;
        }
    }
}

// spawns on the executor of the mode, the future's own type kept
macro_rules! spawn {
    ($f:expr) => {
        if smol_mode() {
            smol::spawn($f).detach()
        } else {
            drop(async_std::task::spawn($f))
        }
    };
}

fn boxed_root() -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(x_nest_b())
}

fn zoo(keep: &mut Vec<async_channel::Sender<u32>>) {
    let (tx, rx) = async_channel::unbounded::<u32>();
    keep.push(tx);
    spawn!(x_nest_a());
    spawn!(x_recv(rx.clone()));
    spawn!(x_join());
    spawn!(x_select(rx));
    spawn!(x_fn_select());
    spawn!(x_join_all());
    spawn!(x_unordered());
    spawn!(x_boxed());
    spawn!(boxed_root());
    spawn!(x_combinators());
    spawn!(x_timeout());
    spawn!(x_blocking());
    if std::env::args().any(|a| a == "load") {
        for _ in 0..2 {
            let (t1, r1) = async_channel::bounded::<u64>(1);
            let (t2, r2) = async_channel::bounded::<u64>(1);
            let first = t1.clone();
            spawn!(x_ping(r1, t2));
            spawn!(x_ping(r2, t1));
            spawn!(async move {
                let _ = first.send(0).await;
            });
        }
    }
}

fn main() {
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(120));
        std::process::exit(0);
    });
    let mut keep = Vec::new();
    if smol_mode() {
        zoo(&mut keep);
        let ex: &'static async_executor::Executor<'static> = Box::leak(Box::new(async_executor::Executor::new()));
        ex.spawn(x_user()).detach();
        ex.spawn(x_user()).detach();
        std::thread::Builder::new()
            .name("user-exec".into())
            .spawn(move || smol::block_on(ex.run(std::future::pending::<()>())))
            .unwrap();
        let local = async_executor::LocalExecutor::new();
        local.spawn(x_local(std::rc::Rc::new(1))).detach();
        local.spawn(x_local(std::rc::Rc::new(2))).detach();
        smol::block_on(local.run(async {
            smol::Timer::after(Duration::from_millis(300)).await;
            println!("ready");
            never().await; // dump: main_smol
        }));
    } else {
        zoo(&mut keep);
        async_std::task::block_on(async {
            async_std::task::sleep(Duration::from_millis(300)).await;
            println!("ready");
            never().await; // dump: main_std
        });
    }
    drop(keep);
}
