//! `volley-server [config-file] [--option value ...]`: Redis's command line.
use std::process::ExitCode;

use volley::config::Config;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-v" || a == "--version") {
        println!("Volley server v={} (Redis-compatible 7.0.15)", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("Usage: volley-server [/path/to/redis.conf] [--option value ...]");
        println!("       volley-server --port 7777 --save \"\" --appendonly no");
        return ExitCode::SUCCESS;
    }
    let config = match Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = volley::log::init(config.loglevel, &config.logfile) {
        eprintln!("Can't open the log file: {e}");
        return ExitCode::FAILURE;
    }
    if config.daemonize {
        if let Err(e) = volley::daemon::daemonize() {
            eprintln!("Can't daemonize: {e}");
            return ExitCode::FAILURE;
        }
    }
    let pidfile = if config.daemonize && config.pidfile.is_empty() {
        "/var/run/redis_6379.pid".to_string()
    } else {
        config.pidfile.clone()
    };
    let _pidfile = volley::daemon::PidFile::create(&pidfile);
    match volley::run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            volley::log_at!(Warning, "{e}");
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
