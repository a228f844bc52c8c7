//! LATENCY LATEST|HISTORY|RESET|GRAPH|DOCTOR|HISTOGRAM|HELP over the event
//! series and per-command histograms of `server::latency` (the call path
//! fills both).
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::server::latency::{Histogram, Series};
use crate::server::unix_ms;
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);
const ADMIN_FLAGS: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

#[rustfmt::skip]
static SUBS: [CommandSpec; 7] = [
    spec!("doctor", 2, ADMIN_FLAGS, NONE, doctor, "server", "2.8.13", "Return a human readable latency analysis report.", ["admin", "slow", "dangerous"]),
    spec!("histogram", -2, ADMIN_FLAGS, NONE, histogram, "server", "7.0.0", "Return the cumulative distribution of latencies of a subset of commands or all.", ["admin", "slow", "dangerous"]),
    spec!("history", 3, ADMIN_FLAGS, NONE, history, "server", "2.8.13", "Return timestamp-latency samples for the event.", ["admin", "slow", "dangerous"]),
    spec!("graph", 3, ADMIN_FLAGS, NONE, graph, "server", "2.8.13", "Return a latency graph for the event.", ["admin", "slow", "dangerous"]),
    spec!("help", 2, LOADING | STALE, NONE, help, "server", "2.8.13", "Show helpful text about the different subcommands.", ["slow"]),
    spec!("reset", -2, ADMIN_FLAGS, NONE, reset, "server", "2.8.13", "Reset latency data for one or more events.", ["admin", "slow", "dangerous"]),
    spec!("latest", 2, ADMIN_FLAGS, NONE, latest, "server", "2.8.13", "Return the latest latency samples for all events.", ["admin", "slow", "dangerous"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    CommandSpec { subcommands: &SUBS, ..spec!("latency", -2, 0, NONE, container, "server", "2.8.13", "A container for latency diagnostics commands", ["slow"]) },
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn container(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.error("ERR unknown subcommand. Try LATENCY HELP.");
}

const HELP: &[&str] = &[
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
];

fn help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help("LATENCY", HELP);
}

fn latest(ctx: &mut Ctx, _argv: &Argv) {
    let events = &ctx.srv.latency_events.series;
    ctx.r.array(events.len());
    for (name, s) in events {
        let last = s.latest();
        ctx.r.array(4);
        ctx.r.bulk(name.as_bytes());
        ctx.r.int(last.time);
        ctx.r.int(last.latency_ms as i64);
        ctx.r.int(s.max_ms as i64);
    }
}

fn history(ctx: &mut Ctx, argv: &Argv) {
    let event = String::from_utf8_lossy(argv.get(2));
    let Some(s) = ctx.srv.latency_events.series.get(event.as_ref()) else { return ctx.r.array(0) };
    ctx.r.array(s.samples().count());
    for sample in s.samples() {
        ctx.r.array(2);
        ctx.r.int(sample.time);
        ctx.r.int(sample.latency_ms as i64);
    }
}

fn reset(ctx: &mut Ctx, argv: &Argv) {
    let events = &mut ctx.srv.latency_events;
    let n = if argv.len() == 2 {
        events.reset(None)
    } else {
        argv.iter_from(2).map(|e| events.reset(Some(String::from_utf8_lossy(e).as_ref()))).sum()
    };
    ctx.r.int(n as i64);
}

fn graph(ctx: &mut Ctx, argv: &Argv) {
    let event = String::from_utf8_lossy(argv.get(2)).into_owned();
    let Some(s) = ctx.srv.latency_events.series.get(&event) else {
        return ctx.r.error(&format!("ERR No samples available for event '{event}'"));
    };
    let text = sparkline::graph(&event, s, unix_ms() / 1000);
    ctx.r.verbatim(text.as_bytes());
}

fn doctor(ctx: &mut Ctx, _argv: &Argv) {
    let text = doctor_report(ctx);
    ctx.r.verbatim(text.as_bytes());
}

/// The DOCTOR text: Redis's statistics lines per event; the advice part
/// is shorter than Redis's and only covers the events Volley produces.
fn doctor_report(ctx: &Ctx) -> String {
    let cfg = &ctx.srv.config;
    let events = &ctx.srv.latency_events.series;
    if events.is_empty() && cfg.latency_monitor_threshold == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \
                \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a \
                deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
            .into();
    }
    if events.is_empty() {
        return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest \
                bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
            .into();
    }
    let mut out = String::from(
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n",
    );
    let now = unix_ms() / 1000;
    for (i, (name, s)) in events.iter().enumerate() {
        let st = event_stats(s, now);
        out.push_str(&format!(
            "{}. {name}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time \
             event {}ms.\n",
            i + 1,
            st.samples,
            st.avg,
            st.mad,
            st.period as f64 / st.samples.max(1) as f64,
            s.max_ms
        ));
    }
    out.push_str("\nI have a few advices for you:\n\n");
    if events.contains_key("command") {
        out.push_str(
            "- Check your Slow Log (SLOWLOG GET) to find the commands that run too long, and split large objects \
             that are often deleted or expired.\n",
        );
    }
    if events.contains_key("fast-command") {
        out.push_str(
            "- Commands flagged as fast took long: the system may not be giving the server enough CPU time.\n",
        );
    }
    out
}

struct EventStats {
    samples: u64,
    avg: u64,
    /// Mean absolute deviation from the average.
    mad: u64,
    /// Seconds since the oldest sample (at least 1).
    period: i64,
}

fn event_stats(s: &Series, now: i64) -> EventStats {
    let lat: Vec<u64> = s.samples().map(|x| x.latency_ms).collect();
    let n = lat.len() as u64;
    let avg = lat.iter().sum::<u64>().checked_div(n).unwrap_or(0);
    let mad = lat.iter().map(|&l| l.abs_diff(avg)).sum::<u64>().checked_div(n).unwrap_or(0);
    let oldest = s.samples().map(|x| x.time).min().unwrap_or(now);
    EventStats { samples: n, avg, mad, period: (now - oldest).max(1) }
}

/// LATENCY HISTOGRAM [command ...]: a map from command full name to its
/// calls and cumulative histogram, for the named commands (a container
/// name stands for its subcommands too; unknown names are skipped) or all.
fn histogram(ctx: &mut Ctx, argv: &Argv) {
    let reg = ctx.reg;
    let mut ids: Vec<usize> = Vec::new();
    if argv.len() == 2 {
        ids.extend(0..reg.len());
    } else {
        for name in argv.iter_from(2) {
            let Some(id) = reg.find(name) else { continue };
            ids.push(id);
            let prefix = format!("{}|", reg.full_name(id));
            ids.extend((0..reg.len()).filter(|&i| reg.full_name(i).starts_with(&prefix)));
        }
    }
    let stats = &ctx.srv.stats.commands;
    let with_data: Vec<(usize, &Histogram)> =
        ids.into_iter().filter_map(|id| stats.get(id)?.histogram.as_ref().map(|h| (id, h))).collect();
    ctx.r.map(with_data.len());
    for (id, h) in with_data {
        ctx.r.bulk(reg.full_name(id).as_bytes());
        ctx.r.map(2);
        ctx.r.bulk(b"calls");
        ctx.r.int(h.total() as i64);
        ctx.r.bulk(b"histogram_usec");
        let buckets = h.cumulative_usec();
        ctx.r.map(buckets.len());
        for (us, count) in buckets {
            ctx.r.int(us as i64);
            ctx.r.int(count as i64);
        }
    }
}

/// LATENCY GRAPH's text: a header, a rule, and a 4-row sparkline of the
/// samples (oldest left) with each sample's age written vertically below.
mod sparkline {
    use crate::server::latency::Series;

    const COLUMNS: usize = 80;
    const ROWS: usize = 4;
    /// Fill characters from low to high within one row; `|` fills below.
    const LEVELS: &[u8] = b"_o#";

    pub fn graph(event: &str, s: &Series, now: i64) -> String {
        let values: Vec<u64> = s.samples().map(|x| x.latency_ms).collect();
        let labels: Vec<String> = s.samples().map(|x| age_label(now - x.time)).collect();
        let (min, max) = (values.iter().min().copied().unwrap_or(0), values.iter().max().copied().unwrap_or(0));
        let mut out = format!("{event} - high {max} ms, low {min} ms (all time high {} ms)\n", s.max_ms);
        out.push_str(&"-".repeat(COLUMNS));
        out.push('\n');
        for (chunk, start) in values.chunks(COLUMNS).zip((0..).step_by(COLUMNS)) {
            if start != 0 {
                out.push('\n');
            }
            render(&mut out, chunk, &labels[start..start + chunk.len()], min, max);
        }
        out
    }

    fn age_label(secs: i64) -> String {
        match secs {
            s if s < 60 => format!("{s}s"),
            s if s < 3600 => format!("{}m", s / 60),
            s if s < 86400 => format!("{}h", s / 3600),
            s => format!("{}d", s / 86400),
        }
    }

    /// Bar rows top-down, a blank spacer row, then the labels one
    /// character per row.
    fn render(out: &mut String, values: &[u64], labels: &[String], min: u64, max: u64) {
        let steps = LEVELS.len() * ROWS;
        let range = if max == min { 1.0 } else { (max - min) as f64 };
        let step_of = |v: u64| (((v - min) as f64 * steps as f64 / range) as usize).min(steps - 1);
        for row in 0..ROWS {
            let line: String = values
                .iter()
                .map(|&v| {
                    let idx = step_of(v) as isize - ((ROWS - row - 1) * LEVELS.len()) as isize;
                    match idx {
                        i if i < 0 => ' ',
                        i if (i as usize) < LEVELS.len() => LEVELS[i as usize] as char,
                        _ => '|',
                    }
                })
                .collect();
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&" ".repeat(values.len()));
        out.push('\n');
        let tallest = labels.iter().map(String::len).max().unwrap_or(0);
        for ch in 0..tallest {
            let line: String = labels.iter().map(|l| l.as_bytes().get(ch).map_or(' ', |&b| b as char)).collect();
            out.push_str(&line);
            out.push('\n');
        }
    }
}
