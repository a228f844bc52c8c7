//! Placeholder until the config branch lands (same field names).
use std::path::PathBuf;
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel { Debug, Verbose, Notice, Warning, Nothing }
#[derive(Debug, Clone)]
pub struct Config {
    pub port: u16, pub bind: Vec<String>, pub dir: PathBuf, pub requirepass: Option<Vec<u8>>,
    pub databases: usize, pub maxclients: u32, pub loglevel: LogLevel, pub logfile: String,
    pub daemonize: bool, pub pidfile: String, pub timeout: u64, pub tcp_backlog: u32, pub hz: u32,
    pub proto_max_bulk_len: u64, pub client_query_buffer_limit: u64,
    pub client_output_buffer_limit_normal: (u64, u64, u64),
    pub pipeline_output_pause: u64, pub pipeline_input_spill: u64,
}
impl Config {
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut c = Config { port: 6379, bind: vec!["127.0.0.1".into()], dir: ".".into(), requirepass: None,
            databases: 16, maxclients: 10000, loglevel: LogLevel::Notice, logfile: String::new(), daemonize: false,
            pidfile: String::new(), timeout: 0, tcp_backlog: 511, hz: 10, proto_max_bulk_len: 512 << 20,
            client_query_buffer_limit: 1 << 30, client_output_buffer_limit_normal: (0, 0, 0),
            pipeline_output_pause: 1 << 20, pipeline_input_spill: 16 << 20 };
        let mut i = 0;
        while i < args.len() {
            let k = args[i].trim_start_matches("--"); let v = args.get(i + 1).cloned().unwrap_or_default();
            match k { "port" => c.port = v.parse().map_err(|_| "bad port")?, "bind" => c.bind = vec![v],
                "dir" => c.dir = v.into(), "requirepass" => c.requirepass = Some(v.into_bytes()),
                "logfile" => c.logfile = v, "maxclients" => c.maxclients = v.parse().map_err(|_| "bad")?, _ => {} }
            i += 2;
        }
        Ok(c)
    }
    pub fn get(&self, _patterns: &[&[u8]]) -> Vec<(String, String)> { vec![] }
    pub fn set(&mut self, _pairs: &[(&[u8], &[u8])]) -> Result<(), String> { Ok(()) }
}
