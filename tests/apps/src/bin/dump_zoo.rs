//! Every way a Tokio task can be parked, at known lines, for `asyncscope
//! dump` and `top` (tests/integ/checks/dump_zoo_check.py holds the truth):
//! the await macros (tokio::{select!, join!, try_join!}, futures::{join!,
//! select!, select_biased!}), futures::future::{select, join_all},
//! Box<dyn Future>, Pin<Box<dyn Future>> (awaited, returned by a trait
//! method, and as a task's own future), JoinSet, FuturesUnordered, the
//! combinators (timeout, map, then, fuse, maybe_done, unconstrained, a
//! hand-written one, a stack of them), nested and generic async fns, an
//! async closure, spawn_blocking, and the sync primitives (Notify, Mutex,
//! oneshot, Semaphore, watch, interval, accept, a silent read, a send on a
//! full channel, a JoinHandle), and tokio's echo server with three idle
//! connections.
//!
//! Usage: dump_zoo [multi|current] [WORD...]
//!   multi (default): main's runtime has 2 workers; current: current-thread
//!   load:     4 ping-pong pairs, a spawner of short-lived tasks and a
//!             CPU-bound yielder keep the runtime busy
//!   blocking: main's future keeps the blocking pool busy (20 ms
//!             spawn_blocking calls, again and again), nothing else polled
//!   two:      a second runtime (current-thread, thread "rt2") with its own
//!             parked tasks (nest_a, t_join3, p_notify)
//!   local:    main's future runs a LocalSet holding tasks (l_local,
//!             l_rc) and, inside it, a nested LocalSet (l_nested); one
//!             LocalSet task owns and runs a third LocalSet (l_owner, its
//!             task l_inner); an empty LocalSet is kept in main's frame
//! Prints "ready" once every task is parked, then runs until killed (120 s
//! at most). The `// dump: TAG` comments mark the lines the stacks must
//! show: keep each on its .await's (or its macro's) line.
use futures::{FutureExt, StreamExt};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, oneshot, watch, Notify, Semaphore};

const HOUR: Duration = Duration::from_secs(3600);

async fn never() {
    std::future::pending::<()>().await; // dump: never
}

async fn hour() {
    tokio::time::sleep(HOUR).await; // dump: hour
}

// nested async fns, the middle one generic
async fn nest_a() {
    nest_b(7u32).await; // dump: nest_a
}

async fn nest_b<T: std::fmt::Debug>(t: T) {
    nest_c().await; // dump: nest_b
    println!("{t:?}");
}

async fn nest_c() {
    hour().await; // dump: nest_c
}

// tokio's macros
async fn t_select(mut rx: mpsc::Receiver<u32>) {
    tokio::select! { // dump: t_select
        v = rx.recv() => println!("{v:?}"),
        _ = hour() => {}
    }
}

async fn t_select_disabled(flag: bool) {
    tokio::select! { // dump: t_select_disabled
        biased;
        _ = hour(), if flag => {}
        _ = never() => {}
    }
}

async fn t_join3() {
    let (a, _, _) = tokio::join!(async { 7 }, hour(), never()); // dump: t_join3
    println!("{a}");
}

async fn ok(f: impl Future<Output = ()>) -> Result<(), ()> {
    f.await; // dump: ok
    Ok(())
}

async fn t_try_join() {
    let _ = tokio::try_join!(ok(hour()), ok(never())); // dump: t_try_join
}

// futures' macros and functions
async fn f_join() {
    futures::join!(hour(), never()); // dump: f_join
}

async fn f_select(mut rx: futures::channel::mpsc::Receiver<u32>) {
    futures::select! { // dump: f_select
        v = rx.next() => println!("{v:?}"),
        _ = hour().fuse() => {},
    }
}

async fn f_select_biased() {
    let a = never().fuse();
    let b = hour().fuse();
    futures::pin_mut!(a, b);
    futures::select_biased! { // dump: f_select_biased
        _ = a => {},
        _ = b => {},
    }
}

async fn f_fn_select() {
    let r = futures::future::select(Box::pin(hour()), Box::pin(never())).await; // dump: f_fn_select
    drop(r);
}

async fn f_fn_select_pinned() {
    let a = hour();
    let b = never();
    futures::pin_mut!(a, b);
    let _ = futures::future::select(a, b).await; // dump: f_fn_select_pinned
}

async fn f_join_all() {
    futures::future::join_all(vec![hour(), hour(), hour()]).await; // dump: f_join_all
}

// boxed futures
async fn b_pin_box() {
    let f: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(nest_c());
    f.await; // dump: b_pin_box
}

async fn b_box_unpin() {
    let f: Box<dyn Future<Output = ()> + Unpin + Send> = Box::new(Box::pin(never()));
    f.await; // dump: b_box_unpin
}

fn boxed_root() -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(nest_c())
}

trait Service {
    fn call(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

struct Svc;

impl Service for Svc {
    fn call(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            never().await; // dump: svc_call
        })
    }
}

async fn b_trait(s: Box<dyn Service + Send + Sync>) {
    s.call().await; // dump: b_trait
}

// task sets
async fn j_set() {
    let mut set = tokio::task::JoinSet::new();
    set.spawn(hour());
    set.spawn(never());
    while set.join_next().await.is_some() {} // dump: j_set
}

async fn j_unordered() {
    let mut fu = futures::stream::FuturesUnordered::new();
    fu.push(hour());
    fu.push(hour());
    fu.next().await; // dump: j_unordered
}

// combinators
async fn c_timeout() {
    let _ = tokio::time::timeout(HOUR, never()).await; // dump: c_timeout
}

async fn c_map() {
    let v = never().map(|_| 1).await; // dump: c_map
    println!("{v}");
}

async fn c_then() {
    never().then(|_| async {}).await; // dump: c_then
}

async fn c_then_second() {
    async {}.then(|_| hour()).await; // dump: c_then_second
}

async fn c_fuse() {
    never().fuse().await; // dump: c_fuse
}

async fn c_maybe_done() {
    let md = futures::future::maybe_done(hour());
    futures::pin_mut!(md);
    md.await; // dump: c_maybe_done
}

async fn c_stack() {
    let _ = tokio::time::timeout(HOUR, nest_a().fuse().map(|_| 1)).await; // dump: c_stack
}

async fn c_unconstrained() {
    tokio::task::unconstrained(never()).await; // dump: c_unconstrained
}

struct Counted<F> {
    polls: u64,
    inner: F,
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: inner is never moved out of the pinned struct
        let this = unsafe { self.get_unchecked_mut() };
        this.polls += 1;
        unsafe { Pin::new_unchecked(&mut this.inner) }.poll(cx)
    }
}

async fn c_handwritten() {
    Counted { polls: 0, inner: never() }.await; // dump: c_handwritten
}

async fn c_async_closure() {
    let f = async |k: u32| {
        hour().await; // dump: closure_body
        k
    };
    let v = f(3).await; // dump: c_async_closure
    println!("{v}");
}

// the primitives
async fn p_notify(n: Arc<Notify>) {
    n.notified().await; // dump: p_notify
}

async fn p_mutex(m: Arc<tokio::sync::Mutex<u32>>) {
    let g = m.lock().await; // dump: p_mutex
    drop(g);
}

async fn p_oneshot(rx: oneshot::Receiver<u32>) {
    let _ = rx.await; // dump: p_oneshot
}

async fn p_semaphore(s: Arc<Semaphore>) {
    let _p = s.acquire().await; // dump: p_semaphore
}

async fn p_watch(mut rx: watch::Receiver<u32>) {
    let _ = rx.changed().await; // dump: p_watch
}

async fn p_interval() {
    let mut iv = tokio::time::interval(HOUR);
    iv.tick().await;
    iv.tick().await; // dump: p_interval
}

async fn p_accept(l: tokio::net::TcpListener) {
    let _ = l.accept().await; // dump: p_accept
}

async fn p_read(mut s: tokio::net::TcpStream) {
    let mut buf = [0u8; 16];
    let _ = s.read(&mut buf).await; // dump: p_read
}

async fn p_send_full(tx: mpsc::Sender<u32>) {
    let _ = tx.send(1).await;
    let _ = tx.send(2).await; // dump: p_send_full
}

// tokio's echo server, its connections idle
async fn e_server(l: tokio::net::TcpListener) {
    loop {
        let (s, _) = l.accept().await.unwrap(); // dump: e_server
        tokio::spawn(e_conn(s));
    }
}

async fn e_conn(mut s: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let mut buf = vec![0u8; 1024];
    loop {
        let n = s.read(&mut buf).await.unwrap_or(0); // dump: e_conn
        if n == 0 || s.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

async fn p_join_handle(h: tokio::task::JoinHandle<()>) {
    let _ = h.await; // dump: p_join_handle
}

async fn p_blocking() {
    let _ = tokio::task::spawn_blocking(|| std::thread::sleep(HOUR)).await; // dump: p_blocking
}

// load
async fn l_ping(mut rx: mpsc::Receiver<u64>, tx: mpsc::UnboundedSender<u64>) {
    while let Some(v) = rx.recv().await { // dump: l_ping
        if tx.send(v + 1).is_err() {
            return;
        }
    }
}

async fn l_pong(mut rx: mpsc::UnboundedReceiver<u64>, tx: mpsc::Sender<u64>) {
    while let Some(v) = rx.recv().await { // dump: l_pong
        if tx.send(v + 1).await.is_err() { // dump: l_pong_send
            return;
        }
    }
}

async fn l_short() {
    tokio::task::yield_now().await; // dump: l_short
}

async fn l_spawner() {
    loop {
        let _ = tokio::spawn(l_short()).await; // dump: l_spawner
    }
}

async fn l_spin() {
    loop {
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_micros(200) {}
        tokio::task::yield_now().await; // dump: l_spin
    }
}

// LocalSet
async fn l_local() {
    hour().await; // dump: l_local
}

async fn l_rc(v: std::rc::Rc<u32>) {
    never().await; // dump: l_rc
    println!("{v}");
}

async fn l_nested() {
    never().await; // dump: l_nested
}

async fn l_inner() {
    hour().await; // dump: l_inner
}

async fn l_owner() {
    let inner = tokio::task::LocalSet::new();
    inner.spawn_local(l_inner());
    inner.run_until(never()).await; // dump: l_owner
}

struct Keep {
    _mutex_guard: tokio::sync::OwnedMutexGuard<u32>,
    _senders: Vec<Box<dyn std::any::Any + Send>>,
}

fn spawn_zoo(keep: &mut Keep) {
    let flag = std::env::args().count() > 100;
    let (tx, rx) = mpsc::channel::<u32>(1);
    keep._senders.push(Box::new(tx));
    tokio::spawn(nest_a());
    tokio::spawn(t_select(rx));
    tokio::spawn(t_select_disabled(flag));
    tokio::spawn(t_join3());
    tokio::spawn(t_try_join());
    tokio::spawn(f_join());
    let (ftx, frx) = futures::channel::mpsc::channel::<u32>(1);
    keep._senders.push(Box::new(ftx));
    tokio::spawn(f_select(frx));
    tokio::spawn(f_select_biased());
    tokio::spawn(f_fn_select());
    tokio::spawn(f_fn_select_pinned());
    tokio::spawn(f_join_all());
    tokio::spawn(b_pin_box());
    tokio::spawn(b_box_unpin());
    tokio::spawn(boxed_root());
    tokio::spawn(b_trait(Box::new(Svc)));
    tokio::spawn(j_set());
    tokio::spawn(j_unordered());
    tokio::spawn(c_timeout());
    tokio::spawn(c_map());
    tokio::spawn(c_then());
    tokio::spawn(c_then_second());
    tokio::spawn(c_fuse());
    tokio::spawn(c_maybe_done());
    tokio::spawn(c_stack());
    tokio::spawn(c_unconstrained());
    tokio::spawn(c_handwritten());
    tokio::spawn(c_async_closure());
    let n = Arc::new(Notify::new());
    keep._senders.push(Box::new(n.clone()));
    tokio::spawn(p_notify(n));
}

async fn spawn_io(keep: &mut Keep) {
    let m = Arc::new(tokio::sync::Mutex::new(0u32));
    keep._mutex_guard = m.clone().lock_owned().await;
    tokio::spawn(p_mutex(m));
    let (otx, orx) = oneshot::channel::<u32>();
    keep._senders.push(Box::new(otx));
    tokio::spawn(p_oneshot(orx));
    tokio::spawn(p_semaphore(Arc::new(Semaphore::new(0))));
    let (wtx, wrx) = watch::channel(0u32);
    keep._senders.push(Box::new(wtx));
    tokio::spawn(p_watch(wrx));
    tokio::spawn(p_interval());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    tokio::spawn(p_accept(l));
    let l2 = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = tokio::net::TcpStream::connect(l2.local_addr().unwrap()).await.unwrap();
    let (server, _) = l2.accept().await.unwrap();
    keep._senders.push(Box::new(client));
    tokio::spawn(p_read(server));
    let (stx, srx) = mpsc::channel::<u32>(1);
    keep._senders.push(Box::new(srx));
    tokio::spawn(p_send_full(stx));
    let h = tokio::spawn(never());
    tokio::spawn(p_join_handle(h));
    tokio::spawn(p_blocking());
    // three idle clients of the echo server, connected from a plain thread
    let l3 = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = l3.local_addr().unwrap();
    tokio::spawn(e_server(l3));
    let clients = tokio::task::spawn_blocking(move || {
        (0..3).map(|_| std::net::TcpStream::connect(at).unwrap()).collect::<Vec<_>>()
    })
    .await
    .unwrap();
    keep._senders.push(Box::new(clients));
}

fn spawn_load() {
    for _ in 0..4 {
        let (tx1, rx1) = mpsc::channel::<u64>(1);
        let (tx2, rx2) = mpsc::unbounded_channel::<u64>();
        tokio::spawn(l_ping(rx1, tx2));
        let first = tx1.clone();
        tokio::spawn(l_pong(rx2, tx1));
        tokio::spawn(async move { first.send(0).await.ok() });
    }
    tokio::spawn(l_spawner());
    tokio::spawn(l_spin());
}

fn second_runtime(ready: std::sync::mpsc::Sender<()>) {
    std::thread::Builder::new()
        .name("rt2".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                tokio::spawn(nest_a());
                tokio::spawn(t_join3());
                let n = Arc::new(Notify::new());
                tokio::spawn(p_notify(n.clone()));
                tokio::time::sleep(Duration::from_millis(100)).await;
                ready.send(()).unwrap();
                never().await; // dump: rt2_main
                drop(n);
            });
        })
        .unwrap();
}

async fn zoo_main(words: Vec<String>) {
    let has = |w: &str| words.iter().any(|x| x == w);
    let mut keep = Keep {
        _mutex_guard: Arc::new(tokio::sync::Mutex::new(0u32)).lock_owned().await,
        _senders: Vec::new(),
    };
    spawn_zoo(&mut keep);
    spawn_io(&mut keep).await;
    if has("load") {
        spawn_load();
    }
    let (rtx, rrx) = std::sync::mpsc::channel::<()>();
    if has("two") {
        second_runtime(rtx);
        rrx.recv().unwrap();
    }
    if has("local") {
        let _empty = tokio::task::LocalSet::new();
        let outer = tokio::task::LocalSet::new();
        outer
            .run_until(async {
                tokio::task::spawn_local(l_local());
                tokio::task::spawn_local(l_rc(std::rc::Rc::new(5)));
                tokio::task::spawn_local(l_owner());
                let nested = tokio::task::LocalSet::new();
                nested
                    .run_until(async {
                        tokio::task::spawn_local(l_nested());
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        println!("ready");
                        never().await; // dump: main_nested
                    })
                    .await; // dump: main_nested_run
            })
            .await; // dump: main_local_run
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!("ready");
    if has("blocking") {
        loop {
            let _ = tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(20))).await; // dump: main_blocking
        }
    }
    never().await; // dump: main
    drop(keep);
}

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(120));
        std::process::exit(0);
    });
    let rt = if words.iter().any(|w| w == "current") {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    };
    rt.block_on(zoo_main(words));
}
