//! `volley-floor`: the floor server of `volley_bench::floor`, started like
//! a Redis server (`--port N`; every other `--name value` pair is accepted
//! and ignored, so the test harness can start it as it starts the others).
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut port = 6379u16;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--port" {
            match args.get(i + 1).and_then(|p| p.parse().ok()) {
                Some(p) => port = p,
                None => {
                    eprintln!("volley-floor: --port needs a port number");
                    return ExitCode::from(2);
                }
            }
        }
        i += 2;
    }
    match volley_bench::floor::serve(port) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("volley-floor: {e}");
            ExitCode::FAILURE
        }
    }
}
