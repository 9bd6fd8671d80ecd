//! Every way to spawn a Tokio task, each at a known line with a known parent
//! task, for spawn-site tracing. Each spawn prints its truth on stderr, from
//! the same source line (so `line!()` is the spawn call's line):
//!   truth way=WAY task=NAME file=FILE line=LINE parent=PARENT|-
//! NAME is the spawned task's future (an async fn; a blocking closure is
//! named by the fn it calls), PARENT the task polling when it was spawned
//! ("-": none, the main thread or a block_on future, which is not a task).
//! The ways: Runtime::spawn, tokio::spawn (from block_on, from a task, from a
//! child task), Handle::spawn, JoinSet::spawn, spawn_blocking, and in a
//! LocalSet LocalSet::spawn_local and task::spawn_local (from a local task).
//! Handle::spawn uses the handle from Runtime::handle(); one more spawn,
//! "Handle::current+spawn", spawns on a handle that Handle::current() gave on
//! the line before (a spawn-site tracer must not take that call's line).
//! Usage: spawn_ways [multi|current]
use tokio::runtime::Handle;
use tokio::task::{JoinSet, LocalSet};

fn truth(way: &str, task: &str, line: u32, parent: &str) {
    eprintln!("truth way={way} task=spawn_ways::{task} file={} line={line} parent={parent}", file!());
}

async fn by_runtime_spawn() {}

async fn by_tokio_spawn_in_child() {}

async fn by_tokio_spawn() {
    let g = tokio::spawn(by_tokio_spawn_in_child()); truth("tokio::spawn", "by_tokio_spawn_in_child", line!(), "spawn_ways::by_tokio_spawn");
    g.await.unwrap();
}

async fn by_handle_spawn() {}

async fn by_current_handle_spawn() {}

async fn by_join_set() {}

fn blocking_work() -> u64 {
    std::hint::black_box(42)
}

async fn parent(handle: Handle) {
    let a = tokio::spawn(by_tokio_spawn()); truth("tokio::spawn", "by_tokio_spawn", line!(), "spawn_ways::parent");
    let b = handle.spawn(by_handle_spawn()); truth("Handle::spawn", "by_handle_spawn", line!(), "spawn_ways::parent");
    let mut set = JoinSet::new();
    set.spawn(by_join_set()); truth("JoinSet::spawn", "by_join_set", line!(), "spawn_ways::parent");
    let c = tokio::task::spawn_blocking(blocking_work); truth("spawn_blocking", "blocking_work", line!(), "spawn_ways::parent");
    a.await.unwrap();
    b.await.unwrap();
    while set.join_next().await.is_some() {}
    c.await.unwrap();
}

async fn by_spawn_local() {}

async fn by_localset_spawn_local() {}

async fn local_parent() {
    let l = tokio::task::spawn_local(by_spawn_local()); truth("task::spawn_local", "by_spawn_local", line!(), "spawn_ways::local_parent");
    l.await.unwrap();
}

fn main() {
    let flavor = std::env::args().nth(1).unwrap_or_else(|| "multi".into());
    let rt = match flavor.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
    }
    .expect("runtime");
    let r = rt.spawn(by_runtime_spawn()); truth("Runtime::spawn", "by_runtime_spawn", line!(), "-");
    let handle = rt.handle().clone();
    rt.block_on(async move {
        r.await.unwrap();
        // a handle from Handle::current(), used on a later line: the task's
        // site is the spawn's line, not the Handle::current() call's
        let current = Handle::current();
        let hc = current.spawn(by_current_handle_spawn()); truth("Handle::current+spawn", "by_current_handle_spawn", line!(), "-");
        hc.await.unwrap();
        let p = tokio::spawn(parent(handle)); truth("tokio::spawn", "parent", line!(), "-");
        p.await.unwrap();
    });
    let local = LocalSet::new();
    let ls = local.spawn_local(by_localset_spawn_local()); truth("LocalSet::spawn_local", "by_localset_spawn_local", line!(), "-");
    local.block_on(&rt, async move {
        ls.await.unwrap();
        let lp = tokio::task::spawn_local(local_parent()); truth("task::spawn_local", "local_parent", line!(), "-");
        lp.await.unwrap();
    });
    println!("spawn_ways: done");
}
