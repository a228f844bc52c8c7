//! Connection options and the handshake they imply (HELLO / AUTH / SELECT).

use std::time::Duration;

/// How to reach and set up a connection.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// ACL user name (sent with the password).
    pub username: Option<String>,
    /// Password: `AUTH` (RESP2) or `HELLO 3 AUTH` (RESP3).
    pub password: Option<String>,
    /// Database selected after connecting (`SELECT`), when non-zero.
    pub db: u32,
    /// Protocol version: 2 (default, no HELLO) or 3 (`HELLO 3`).
    pub protocol: u8,
    /// Commands per chunk when a pipeline is sent (default 10,000).
    pub chunk_size: usize,
    /// Bytes of requests allowed to be unanswered at once (default 16 MiB).
    pub max_inflight_bytes: usize,
    /// Connect timeout (default 5 s).
    pub connect_timeout: Duration,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            host: "127.0.0.1".into(),
            port: 6379,
            username: None,
            password: None,
            db: 0,
            protocol: 2,
            chunk_size: 10_000,
            max_inflight_bytes: 16 << 20,
            connect_timeout: Duration::from_secs(5),
        }
    }
}

impl ConnectOptions {
    /// Options for `host:port` with every other field at its default.
    pub fn new(host: &str, port: u16) -> Self {
        ConnectOptions { host: host.into(), port, ..Default::default() }
    }

    /// `host:port` as a string for `connect`.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The commands to send right after connecting, in order.
    pub fn handshake(&self) -> Vec<Vec<Vec<u8>>> {
        let mut cmds = Vec::new();
        let user = self.username.clone().unwrap_or_else(|| "default".into());
        if self.protocol == 3 {
            let mut hello = vec![b"HELLO".to_vec(), b"3".to_vec()];
            if let Some(pw) = &self.password {
                hello.extend([b"AUTH".to_vec(), user.into_bytes(), pw.clone().into_bytes()]);
            }
            cmds.push(hello);
        } else if let Some(pw) = &self.password {
            let mut auth = vec![b"AUTH".to_vec()];
            if self.username.is_some() {
                auth.push(user.into_bytes());
            }
            auth.push(pw.clone().into_bytes());
            cmds.push(auth);
        }
        if self.db != 0 {
            cmds.push(vec![b"SELECT".to_vec(), self.db.to_string().into_bytes()]);
        }
        cmds
    }
}
