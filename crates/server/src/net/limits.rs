//! Process limits: the open-files limit must cover `maxclients` plus the
//! descriptors the server needs for itself (listeners, log, files).
use std::io;

/// Descriptors kept back for the server's own use, as Redis reserves.
pub const RESERVED_FDS: u32 = 32;

fn get_nofile() -> io::Result<libc::rlimit> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid, writable rlimit struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(lim)
}

fn set_nofile(cur: libc::rlim_t, max: libc::rlim_t) -> io::Result<()> {
    let lim = libc::rlimit { rlim_cur: cur, rlim_max: max };
    // SAFETY: `lim` is a valid rlimit struct; setrlimit only reads it.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Raise RLIMIT_NOFILE to `maxclients + 32`. When the system refuses, the
/// limit goes as high as the hard limit allows and the effective number of
/// clients shrinks to fit; the return value is that effective `maxclients`
/// (0 if not even the reserved descriptors fit: the caller should refuse to
/// start, as Redis does).
pub fn raise_fd_limit(maxclients: u32) -> u32 {
    let wanted = maxclients as libc::rlim_t + RESERVED_FDS as libc::rlim_t;
    let lim = match get_nofile() {
        Ok(l) => l,
        Err(e) => {
            crate::log_at!(
                Warning,
                "Unable to obtain the current NOFILE limit ({e}), assuming 1024 and setting the max clients configuration accordingly."
            );
            return maxclients.min(1024 - RESERVED_FDS);
        }
    };
    let old = lim.rlim_cur;
    if old >= wanted {
        return maxclients;
    }
    // First ask for the full amount (works when privileged), then settle for
    // the hard limit, which any process may raise its soft limit to.
    let err = match set_nofile(wanted, wanted.max(lim.rlim_max)) {
        Ok(()) => {
            crate::log_at!(
                Notice,
                "Increased maximum number of open files to {wanted} (it was originally set to {old})."
            );
            return maxclients;
        }
        Err(e) => e,
    };
    let best = if lim.rlim_max > old && set_nofile(lim.rlim_max.min(wanted), lim.rlim_max).is_ok() {
        lim.rlim_max.min(wanted)
    } else {
        old
    };
    if best >= wanted {
        return maxclients;
    }
    if best <= RESERVED_FDS as libc::rlim_t {
        crate::log_at!(
            Warning,
            "Your current 'ulimit -n' of {old} is not enough for the server to start. Please increase your open file limit to at least {wanted}. Exiting."
        );
        return 0;
    }
    let effective = (best - RESERVED_FDS as libc::rlim_t) as u32;
    crate::log_at!(
        Warning,
        "You requested maxclients of {maxclients} requiring at least {wanted} max file descriptors."
    );
    crate::log_at!(Warning, "Server can't set maximum open files to {wanted} because of OS error: {err}.");
    crate::log_at!(
        Warning,
        "Current maximum open files is {best}. maxclients has been reduced to {effective} to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."
    );
    effective
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_request_is_granted() {
        assert_eq!(raise_fd_limit(8), 8);
    }

    #[test]
    fn never_exceeds_the_hard_limit() {
        let got = raise_fd_limit(u32::MAX - RESERVED_FDS);
        let lim = get_nofile().unwrap();
        assert!(got as libc::rlim_t + RESERVED_FDS as libc::rlim_t <= lim.rlim_cur.max(RESERVED_FDS as libc::rlim_t));
        // The soft limit now covers what was granted.
        assert!(raise_fd_limit(got.max(1)) == got.max(1));
    }
}
