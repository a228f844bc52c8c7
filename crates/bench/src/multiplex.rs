//! Many tasks, one shared connection: `volley_client::AutoPipelined` against
//! redis-rs's `MultiplexedConnection`, same server, same tokio runtime
//! (current-thread), same workload: `tasks` tasks each doing `per_task` GETs
//! of one key. Client CPU comes from `getrusage(RUSAGE_SELF)` around each run
//! (so nothing else may run in this process meanwhile).

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use volley_client::{AutoPipelined, ConnectOptions};

/// Which client library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lib {
    /// `volley_client::AutoPipelined`.
    Volley,
    /// `redis::aio::MultiplexedConnection` (redis-rs 1.8).
    RedisRs,
}

impl Lib {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Lib::Volley => "volley_client::AutoPipelined",
            Lib::RedisRs => "redis-rs MultiplexedConnection",
        }
    }
}

/// One timed run.
#[derive(Debug, Clone, Copy)]
pub struct MuxRun {
    /// GETs completed.
    pub ops: usize,
    /// Wall time.
    pub wall: Duration,
    /// User + system CPU of this process during the run.
    pub cpu: Duration,
}

impl MuxRun {
    /// Throughput.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Client CPU per GET.
    pub fn cpu_per_op(&self) -> Duration {
        self.cpu / self.ops.max(1) as u32
    }
}

/// User + system CPU time of this process so far.
pub fn process_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn other<E: std::fmt::Display>(e: E) -> io::Error {
    io::Error::other(e.to_string())
}

const KEY: &str = "volley-bench:mux";
const VALUE: &str = "redis:pipelining:test value";

async fn run_volley(addr: SocketAddr, password: Option<&str>, tasks: usize, per_task: usize) -> io::Result<MuxRun> {
    let mut opts = ConnectOptions::new(&addr.ip().to_string(), addr.port());
    opts.password = password.map(String::from);
    let conn = AutoPipelined::connect(&opts, 4096).await.map_err(other)?;
    conn.set(KEY, VALUE).await.map_err(other)?;
    let (t, cpu) = (Instant::now(), process_cpu());
    let mut hs = Vec::with_capacity(tasks);
    for _ in 0..tasks {
        let c = conn.clone();
        hs.push(tokio::spawn(async move {
            let mut good = 0usize;
            for _ in 0..per_task {
                good += usize::from(c.get(KEY).await?.as_deref() == Some(VALUE.as_bytes()));
            }
            Ok::<_, volley_client::Error>(good)
        }));
    }
    finish(hs, t, cpu, tasks * per_task).await
}

async fn run_redis_rs(addr: SocketAddr, password: Option<&str>, tasks: usize, per_task: usize) -> io::Result<MuxRun> {
    let auth = password.map(|p| format!(":{p}@")).unwrap_or_default();
    let client = redis::Client::open(format!("redis://{auth}{addr}/")).map_err(other)?;
    let conn = client.get_multiplexed_async_connection().await.map_err(other)?;
    let mut c0 = conn.clone();
    redis::cmd("SET").arg(KEY).arg(VALUE).query_async::<()>(&mut c0).await.map_err(other)?;
    let (t, cpu) = (Instant::now(), process_cpu());
    let mut hs = Vec::with_capacity(tasks);
    for _ in 0..tasks {
        let mut c = conn.clone();
        hs.push(tokio::spawn(async move {
            let mut good = 0usize;
            for _ in 0..per_task {
                let v: Option<Vec<u8>> = redis::cmd("GET").arg(KEY).query_async(&mut c).await?;
                good += usize::from(v.as_deref() == Some(VALUE.as_bytes()));
            }
            Ok::<_, redis::RedisError>(good)
        }));
    }
    finish(hs, t, cpu, tasks * per_task).await
}

async fn finish<E: std::fmt::Display>(
    hs: Vec<tokio::task::JoinHandle<Result<usize, E>>>,
    t: Instant,
    cpu: Duration,
    want: usize,
) -> io::Result<MuxRun> {
    let mut good = 0;
    for h in hs {
        good += h.await.map_err(other)?.map_err(other)?;
    }
    let run = MuxRun { ops: want, wall: t.elapsed(), cpu: process_cpu().saturating_sub(cpu) };
    if good != want {
        return Err(other(format!("{good}/{want} GETs returned the value")));
    }
    Ok(run)
}

/// One run of `lib` on a fresh current-thread runtime and a fresh connection.
pub fn run_mux(
    lib: Lib,
    addr: SocketAddr,
    password: Option<&str>,
    tasks: usize,
    per_task: usize,
) -> io::Result<MuxRun> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        match lib {
            Lib::Volley => run_volley(addr, password, tasks, per_task).await,
            Lib::RedisRs => run_redis_rs(addr, password, tasks, per_task).await,
        }
    })
}
