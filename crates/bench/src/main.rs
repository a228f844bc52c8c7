//! The `volley-bench` command line: `proxy`, `seeds`, `sweep`, `targets`,
//! `cache` and `cache-sim`.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use volley_bench::cache::{run_cache, CacheOpts};
use volley_bench::cache_sim::{simulate, SimOpts, SimPolicy};
use volley_bench::conn::resolve;
use volley_bench::seeds::{format_table, run_seeds, SeedOpts};
use volley_bench::sweep::{format_points, run_sweep, SweepOpts};
use volley_bench::targets::{format_targets, run_targets, set_child, Target, TargetOpts};
use volley_bench::{parse_duration, proxy};

#[derive(Parser)]
#[command(name = "volley-bench", about = "Pipelining benchmarks for Redis-protocol servers")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// A TCP proxy adding half the RTT in each direction.
    Proxy {
        /// Address to listen on.
        #[arg(long)]
        listen: SocketAddr,
        /// Server to forward to.
        #[arg(long)]
        upstream: String,
        /// Round-trip time to add, e.g. 3.3ms.
        #[arg(long, value_parser = parse_duration)]
        rtt: Duration,
    },
    /// Run every seed experiment and print a table next to the published figures.
    #[command(disable_help_flag = true)]
    Seeds {
        #[command(flatten)]
        server: ServerArgs,
        /// Injected RTT through the built-in proxy (0 = direct).
        #[arg(long, default_value = "0", value_parser = parse_duration)]
        rtt: Duration,
        /// Multiply all counts and batch sizes (e.g. 0.01 for a quick run).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Run at most this many one-by-one commands per row and extrapolate.
        #[arg(long, default_value_t = 10_000)]
        max_serial: usize,
        /// Run only these seed groups (comma-separated: ping, incr, get, sets).
        #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(volley_bench::seeds::GROUPS))]
        only: Vec<String>,
    },
    /// Check the targets (RTT arithmetic, coalescing, auto-pipelining): PASS/FAIL with ratios.
    #[command(disable_help_flag = true)]
    Targets {
        /// Print help (`-h` is the host, as in redis-cli).
        #[arg(long, action = clap::ArgAction::Help)]
        help: Option<bool>,
        /// Server host (all servers).
        #[arg(short = 'h', long, default_value = "127.0.0.1")]
        host: String,
        /// Port of the server under test (volley-server).
        #[arg(short, long, default_value_t = 6380)]
        port: u16,
        /// Also run every target against a redis-server on this port, as reference.
        #[arg(long)]
        redis_port: Option<u16>,
        /// AUTH password (all servers).
        #[arg(short = 'a', long)]
        password: Option<String>,
        /// RTT for the GET targets.
        #[arg(long, default_value = "3.3ms", value_parser = parse_duration)]
        rtt: Duration,
        /// RTT for the 1M-SET target.
        #[arg(long, default_value = "10ms", value_parser = parse_duration)]
        set_rtt: Duration,
        /// Multiply all counts and batch sizes (e.g. 0.01 for a quick run).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Alternating rounds of the auto-pipelining comparison (medians are compared).
        #[arg(long, default_value_t = 3)]
        mux_rounds: usize,
        /// Alternating rounds of the 1M-SET modes (medians are compared).
        #[arg(long, default_value_t = 3)]
        set_rounds: usize,
        /// Check only these target groups (comma-separated: rtt, sets, mux).
        #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(volley_bench::targets::GROUPS))]
        only: Vec<String>,
    },
    /// (internal) One 1M-SET mode in its own process, for `targets`' peak-RSS check.
    #[command(hide = true)]
    SetChild {
        #[arg(long)]
        addr: SocketAddr,
        #[arg(long)]
        mode: String,
        #[arg(long)]
        n: usize,
        #[arg(long)]
        chunk: usize,
        #[arg(short = 'a', long)]
        password: Option<String>,
    },
    /// Throughput (GET, SET) against pipeline depth and RTT; CSV and PNG output.
    Sweep {
        /// Servers as name=host:port, comma-separated.
        #[arg(long, default_value = "server=127.0.0.1:6379", value_delimiter = ',')]
        servers: Vec<String>,
        /// AUTH password (all servers).
        #[arg(short = 'a', long)]
        password: Option<String>,
        /// Pipeline depths.
        #[arg(long, default_value = "1,10,100,1000,10000", value_delimiter = ',')]
        depths: Vec<usize>,
        /// Injected RTTs in ms.
        #[arg(long, default_value = "0,0.2,1,3.3,10", value_delimiter = ',')]
        rtts: Vec<f64>,
        /// Timed runs per point (the median is reported).
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Minimum length of one timed run.
        #[arg(long, default_value = "500ms", value_parser = parse_duration)]
        budget: Duration,
        /// Warm-up before each point.
        #[arg(long, default_value = "100ms", value_parser = parse_duration)]
        warmup: Duration,
        /// Output directory.
        #[arg(long, default_value = "bench-out")]
        out: PathBuf,
    },
    /// Cache-aside load (GET, SET on a miss) over Zipf keys; JSON report on stdout.
    #[command(disable_help_flag = true)]
    Cache(CacheArgs),
    /// The cache benchmark's key sequence against a model cache of N keys: the hit ratio N keys allow.
    CacheSim(SimArgs),
}

/// The server a subcommand talks to, redis-cli style (`-h` is the host).
#[derive(clap::Args)]
struct ServerArgs {
    /// Print help (`-h` is the host, as in redis-cli).
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// Server host.
    #[arg(short = 'h', long, default_value = "127.0.0.1")]
    host: String,
    /// Server port.
    #[arg(short, long, default_value_t = 6379)]
    port: u16,
    /// AUTH password.
    #[arg(short = 'a', long)]
    password: Option<String>,
}

/// The cache load's key sequence, shared by `cache` and `cache-sim` so the
/// model replays exactly what the server saw.
#[derive(clap::Args)]
struct LoadArgs {
    /// Distinct keys key:0 .. key:<keys-1> (key:0 the most popular).
    #[arg(long, default_value_t = 10_000_000)]
    keys: u64,
    /// Zipf exponent.
    #[arg(long, default_value_t = 0.99)]
    zipf: f64,
    /// GETs of the warm-up phase.
    #[arg(long, default_value_t = 5_000_000)]
    warmup: u64,
    /// GETs of the measured phase.
    #[arg(long, default_value_t = 5_000_000)]
    ops: u64,
    /// Connections.
    #[arg(long, default_value_t = 8)]
    conns: usize,
    /// GETs per batch per connection.
    #[arg(long, default_value_t = 16)]
    depth: usize,
    /// Seed of every connection's key sequence.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// `volley-bench cache`'s options (`bench/cache.py` drives it).
#[derive(clap::Args)]
struct CacheArgs {
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    load: LoadArgs,
    /// Bytes of each SET's value.
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// The server's pid (same machine): CPU and RSS from /proc.
    #[arg(long)]
    pid: Option<u32>,
    /// Pause between PINGs of the stall probe.
    #[arg(long, default_value = "1ms", value_parser = parse_duration)]
    ping_gap: Duration,
}

/// `volley-bench cache-sim`'s options: the benchmark's load, and the model
/// caches to replay it against.
#[derive(clap::Args)]
struct SimArgs {
    /// Keys each model cache holds (comma-separated).
    #[arg(long, value_delimiter = ',', required = true)]
    capacity: Vec<usize>,
    /// Eviction rules to model (comma-separated: lru, lfu).
    #[arg(long, value_delimiter = ',', default_value = "lru,lfu")]
    policy: Vec<String>,
    #[command(flatten)]
    load: LoadArgs,
    /// `maxmemory-samples`.
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// `lfu-log-factor`.
    #[arg(long, default_value_t = 10)]
    lfu_log_factor: u32,
}

fn sim_cmd(a: SimArgs) -> Result<bool, String> {
    println!("{:>10}  {:6}  {:>9}  {:>13}", "keys held", "policy", "hit ratio", "best possible");
    for name in &a.policy {
        let policy = match name.as_str() {
            "lru" => SimPolicy::Lru,
            "lfu" => SimPolicy::Lfu,
            other => return Err(format!("unknown policy {other:?} (lru, lfu)")),
        };
        for &capacity in &a.capacity {
            let l = &a.load;
            let opts = SimOpts {
                keys: l.keys,
                exponent: l.zipf,
                warmup: l.warmup,
                ops: l.ops,
                conns: l.conns,
                depth: l.depth,
                seed: l.seed,
                capacity,
                policy,
                samples: a.samples,
                log_factor: a.lfu_log_factor,
            };
            let r = simulate(&opts);
            println!("{capacity:>10}  {name:6}  {:>8.2}%  {:>12.2}%", r.hit_ratio() * 100.0, r.ceiling() * 100.0);
        }
    }
    Ok(true)
}

fn parse_servers(list: &[String]) -> Result<Vec<(String, SocketAddr)>, String> {
    list.iter()
        .map(|s| {
            let (name, hp) = s.split_once('=').ok_or_else(|| format!("expected name=host:port, got {s:?}"))?;
            let (host, port) = hp.rsplit_once(':').ok_or_else(|| format!("no port in {hp:?}"))?;
            let port: u16 = port.parse().map_err(|_| format!("bad port in {hp:?}"))?;
            Ok((name.to_string(), resolve(host, port).map_err(|e| e.to_string())?))
        })
        .collect()
}

fn run(cli: Cli) -> Result<bool, String> {
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    match cli.cmd {
        Cmd::Proxy { listen, upstream, rtt } => {
            let (host, port) = upstream.rsplit_once(':').ok_or("upstream needs host:port")?;
            let up = resolve(host, port.parse().map_err(|_| "bad upstream port")?).map_err(|e| e.to_string())?;
            let listener = TcpListener::bind(listen).map_err(|e| format!("bind {listen}: {e}"))?;
            let h = proxy::serve(listener, up, rtt).map_err(|e| e.to_string())?;
            eprintln!("proxy {} -> {up}, rtt {rtt:?} ({:?} each way)", h.addr(), rtt / 2);
            h.wait();
            Ok(true)
        }
        Cmd::Seeds { server: ServerArgs { host, port, password, .. }, rtt, scale, max_serial, only } => {
            let addr = resolve(&host, port).map_err(|e| e.to_string())?;
            let opts = SeedOpts { addr, password, rtt, scale, max_serial, progress, only };
            let mut on_row = |r: &volley_bench::seeds::Row| eprintln!("  {}: {:?}", r.label, r.measured);
            let report = run_seeds(&opts, &mut on_row).map_err(|e| e.to_string())?;
            let rows = report.rows;
            let title = format!(
                "volley-bench seeds: {addr}, injected RTT {rtt:?} (median PING round trip {:?}), scale {scale}",
                report.ping_rtt
            );
            print!("{}", format_table(&rows, &title));
            Ok(rows.iter().all(|r| r.check.is_ok()))
        }
        Cmd::Targets {
            host, port, redis_port, password, rtt, set_rtt, scale, mux_rounds, set_rounds, only, ..
        } => {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let mut servers = vec![("volley-server", port)];
            servers.extend(redis_port.map(|p| ("redis-server (reference)", p)));
            let mut all_pass = true;
            for (name, port) in servers {
                let addr = resolve(&host, port).map_err(|e| e.to_string())?;
                let (password, exe, only) = (password.clone(), exe.clone(), only.clone());
                let opts = TargetOpts { addr, password, rtt, set_rtt, scale, mux_rounds, set_rounds, exe, only };
                let mut on =
                    |t: &Target| eprintln!("  {}: {} ({})", t.name, t.measured, if t.pass { "PASS" } else { "FAIL" });
                let ts = run_targets(&opts, &mut on).map_err(|e| e.to_string())?;
                let title = format!("volley-bench targets: {name} at {addr}, scale {scale}");
                print!("{}", format_targets(&ts, &title));
                all_pass &= ts.iter().all(|t| t.pass || t.info);
            }
            Ok(all_pass)
        }
        Cmd::SetChild { addr, mode, n, chunk, password } => {
            println!("{}", set_child(addr, password.as_deref(), &mode, n, chunk).map_err(|e| e.to_string())?);
            Ok(true)
        }
        Cmd::Sweep { servers, password, depths, rtts, repeat, budget, warmup, out } => {
            let servers = parse_servers(&servers)?;
            let opts = SweepOpts { servers, password, depths, rtts_ms: rtts, repeat, budget, warmup, out, progress };
            let points = run_sweep(&opts).map_err(|e| e.to_string())?;
            print!("{}", format_points(&points));
            println!("wrote {}/sweep.csv, throughput_vs_depth.png, throughput_vs_rtt.png", opts.out.display());
            Ok(true)
        }
        Cmd::Cache(args) => cache_cmd(args),
        Cmd::CacheSim(args) => sim_cmd(args),
    }
}

fn cache_cmd(a: CacheArgs) -> Result<bool, String> {
    let opts = CacheOpts {
        addr: resolve(&a.server.host, a.server.port).map_err(|e| e.to_string())?,
        password: a.server.password,
        keys: a.load.keys,
        exponent: a.load.zipf,
        warmup: a.load.warmup,
        ops: a.load.ops,
        conns: a.load.conns,
        depth: a.load.depth,
        value_size: a.value_size,
        seed: a.load.seed,
        pid: a.pid,
        ping_gap: a.ping_gap,
        rss_every: Duration::from_millis(10),
    };
    let report = run_cache(&opts, &mut |m| eprintln!("  {m}")).map_err(|e| e.to_string())?;
    eprintln!("{}", report.summary());
    println!("{}", report.json());
    Ok(true)
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("some checks failed");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("volley-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
