//! Protected mode, as Redis 7.0.15's `clientAcceptHandler` decides it:
//! with `protected-mode yes` and no password for the default user, a
//! connection from anywhere but the loopback interface or the Unix socket
//! gets the DENIED text and is closed. (7.0 no longer looks at `bind`:
//! the default bind is loopback-only anyway.)
use crate::server::Server;

/// Redis's reply to a refused connection, byte for byte.
pub const DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no \
password is set for the default user. In this mode connections are only accepted from the loopback interface. If you \
want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable \
protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis \
from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do \
so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by \
editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. \
3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a \
an authentication password for the default user. NOTE: You only need to do one of the above things in order for the \
server to start accepting connections from the outside.\r\n";

/// Whether the `default` user has no password (`nopass`, Redis's
/// USER_FLAG_NOPASS; `requirepass` sets the default user's password).
pub fn default_user_has_no_password(srv: &Server) -> bool {
    srv.acl.default_user().nopass
}

/// The decision itself, apart from the server so it can be tested alone:
/// `local` is true for the Unix socket and for peers 127.0.0.1 and ::1.
pub fn denies(protected_mode: bool, default_nopass: bool, local: bool) -> bool {
    protected_mode && default_nopass && !local
}

/// The decision for a connection just accepted.
pub fn denies_client(srv: &Server, local: bool) -> bool {
    denies(srv.config.protected_mode, default_user_has_no_password(srv), local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_remote_peers_without_password_under_protected_mode_are_denied() {
        assert!(denies(true, true, false));
        assert!(!denies(true, true, true), "loopback and unix socket are always let in");
        assert!(!denies(true, false, false), "a password for default lifts it");
        assert!(!denies(false, true, false), "protected-mode no lifts it");
    }

    #[test]
    fn denied_text_is_one_error_line() {
        assert!(DENIED.starts_with("-DENIED Redis is running in protected mode"));
        assert_eq!(DENIED.matches("\r\n").count(), 1);
        assert!(DENIED.ends_with("from the outside.\r\n"));
        assert!(DENIED.contains("'CONFIG SET protected-mode no'"));
    }

    #[test]
    fn a_password_for_the_default_user_lifts_protected_mode() {
        let (mut srv, _) = crate_server();
        assert!(default_user_has_no_password(&srv));
        assert!(denies_client(&srv, false) == srv.config.protected_mode);
        srv.acl.set_default_password(Some(b"secret"));
        assert!(!denies_client(&srv, false));
    }

    fn crate_server() -> (Server, ()) {
        let cfg = crate::config::Config { protected_mode: true, ..Default::default() };
        let persistence = crate::server::Part::new(());
        let scripting = crate::server::Part::new(());
        (Server::new(cfg, 1, persistence, scripting), ())
    }
}
