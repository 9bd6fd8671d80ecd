//! Many tasks of many kinds, for `asyncscope serve`'s label cap: N tasks
//! (default 100000) of 150 kinds (150 distinct async blocks: 150 root future
//! types), task i of kind i % 150, each polled exactly twice (one yield);
//! spawned in rounds of 10000 at once, once PATH exists (--go-file PATH: a
//! tracer attaches first), then the program idles SECONDS (default 0) and
//! exits. Known truth: 2 * N polls, N tasks spawned and completed.
//! Usage: many_groups [N] [SECONDS] [--go-file PATH]
use std::time::Duration;

macro_rules! spawn_kind {
    ($k:expr, $h:expr, $($n:literal)*) => {
        match $k {
            $( $n => $h.push(tokio::spawn(async move {
                tokio::task::yield_now().await;
                $n
            })), )*
            _ => unreachable!(),
        }
    };
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let secs: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let go_file = args.iter().position(|a| a == "--go-file").and_then(|i| args.get(i + 1)).cloned();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
        .expect("runtime");
    rt.block_on(async move {
        if let Some(path) = go_file {
            while !std::path::Path::new(&path).exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        let mut sum = 0usize;
        let mut i = 0;
        while i < n {
            let end = (i + 10_000).min(n);
            let mut handles = Vec::with_capacity(end - i);
            for j in i..end {
                spawn_kind!(j % 150, handles,
                    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
                    30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55
                    56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81
                    82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105
                    106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125
                    126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145
                    146 147 148 149);
            }
            for h in handles {
                sum += h.await.expect("join");
            }
            i = end;
        }
        println!("spawned {} tasks, sum {}", n, sum);
        tokio::time::sleep(Duration::from_secs(secs)).await;
    });
}
